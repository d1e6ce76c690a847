#!/usr/bin/env bash
# Overload: far more requests for an expensive uncached page than the site can
# render, while a second client keeps reading a cached page. Expected: fast 503s
# for the excess, the cached page keeps its latency, memory stays bounded, and the
# expensive page works again within a second after the rush. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8500}
DURATION=${DURATION:-8}
ulimit -n "$(ulimit -Hn)"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --profile dist -q -p bulwark
target/dist/bulwark serve --sites bench/sites --listen "127.0.0.1:$PORT" --access-log off \
    --render-concurrency 2 --render-queue-timeout 0.25 >/tmp/bulwark-overload.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
url="http://127.0.0.1:$PORT"
for _ in $(seq 100); do curl -sf "$url/cached" >/dev/null && break; sleep 0.1; done
rss() { echo $(($(awk '/VmRSS/ {print $2}' /proc/$SERVER/status) / 1024)); }
p99() { awk '/ 99%/ {print $2}' "$1"; }

wrk -t1 -c2 -d3s --latency "$url/slow" >/tmp/ovl-capacity.txt
wrk -t1 -c10 -d3s --latency "$url/cached" >/tmp/ovl-cached-quiet.txt
echo "capacity of /slow    $(awk '/Requests\/sec/ {print $2}' /tmp/ovl-capacity.txt) req/s (2 connections)"
echo "cached page, quiet   p99 $(p99 /tmp/ovl-cached-quiet.txt), RSS $(rss) MiB"

wrk -t1 -c200 -d"${DURATION}s" --latency "$url/slow" >/tmp/ovl-slow.txt &
RUSH=$!
sleep 1
wrk -t1 -c10 -d"$((DURATION - 2))s" --latency "$url/cached" >/tmp/ovl-cached-busy.txt
peak=$(rss)
wait $RUSH
total=$(awk '/requests in/ {print $1}' /tmp/ovl-slow.txt)
non2xx=$(awk '/Non-2xx/ {print $5}' /tmp/ovl-slow.txt); non2xx=${non2xx:-0}
echo "rush on /slow        $total requests from 200 connections in ${DURATION}s, $non2xx answered 503, p99 $(p99 /tmp/ovl-slow.txt)"
echo "cached page, rush    p99 $(p99 /tmp/ovl-cached-busy.txt), $(awk '/Requests\/sec/ {print $2}' /tmp/ovl-cached-busy.txt) req/s, RSS $peak MiB"
sleep 1
start=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/slow")
echo "1 s after the rush   /slow answers $code in $(( ($(date +%s%N) - start) / 1000000 )) ms, RSS $(rss) MiB"
