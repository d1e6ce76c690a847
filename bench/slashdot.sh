#!/usr/bin/env bash
# The Slashdot effect: the starter site's home page is cached, an article on it is
# edited (which invalidates it), and 3,000 connections arrive at once. Reports how
# many renders that caused (goal: 1), errors (goal: 0), throughput and p99.
# Loopback only, bounded in time. Usage: CONNECTIONS=3000 DURATION=5 bench/slashdot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8400}
CONNECTIONS=${CONNECTIONS:-3000}
DURATION=${DURATION:-5}
ulimit -n "$(ulimit -Hn)"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --profile dist -q -p bulwark
work=$(mktemp -d)
(cd "$work" && exec "$OLDPWD/target/dist/bulwark" serve --listen "127.0.0.1:$PORT" --access-log off) \
    >"$work/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$work"' EXIT
url="http://127.0.0.1:$PORT"
for _ in $(seq 200); do curl -sf "$url/" >/dev/null && break; sleep 0.1; done
token=$(sed -n 's/^token = "\(.*\)"/\1/p' "$work/sites/default/site.toml")
stat() { curl -s -H "Authorization: Bearer $token" "$url/api/stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

curl -s "$url/" >/dev/null                       # the page is cached now
id=$(curl -s "$url/" | grep -o 'href="/page/[0-9]*' | head -1 | grep -o '[0-9]*$')
before=$(stat renders)
curl -s -X PATCH -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
     -d '{"props": {"title": "Slashdotted"}}' "$url/api/rsc/$id" >/dev/null
sleep 0.2                                        # the change event flushes the page
wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$url/" >"$work/wrk.txt"
after=$(stat renders)
curl -s "$url/" | grep -q Slashdotted && fresh=yes || fresh=no
echo "connections          $CONNECTIONS for ${DURATION}s on / (just invalidated)"
echo "renders              $((after - before)) (page shows the edit: $fresh)"
grep -E "Requests/sec|Non-2xx|Socket errors" "$work/wrk.txt" | sed 's/^ */wrk                  /'
awk '/ 50%| 99%/ {print "latency " $1 "          " $2}' "$work/wrk.txt"
echo "server RSS           $(($(awk '/VmRSS/ {print $2}' /proc/$SERVER/status) / 1024)) MiB"
