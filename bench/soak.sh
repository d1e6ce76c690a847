#!/usr/bin/env bash
# Memory under sustained load: Bulwark's RSS while 3,000 connections keep
# asking for pages for MINUTES minutes (default 10), sampled every minute, and
# nginx's RSS (its workers summed) under the same load for one minute beside
# it. Growth past the first minute (allocator and caches warmed) is what a
# leak would show.
#
#   bench/soak.sh                                  # 10 minutes, /json, /random, /cached
#   MINUTES=2 CONNECTIONS=1000 BULWARK_BIN=/work/bin-new bench/soak.sh
#
# Three wrk processes share the connections (one per path), loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${MINUTES:-10}
CONNECTIONS=${CONNECTIONS:-3000}
BULWARK_PORT=${BULWARK_PORT:-8120}
NGINX_PORT=${NGINX_PORT:-8121}

# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
need nginx nginx-light

start_bench_bulwark "$BULWARK_PORT"
mkdir -p "$work/static"
for path in json random cached; do
    curl -s "http://127.0.0.1:$BULWARK_PORT/$path" >"$work/static/$path"
done
start_nginx "$NGINX_PORT" "
        location / { default_type text/html; root $work/static; }"

rss_mib() { # PID...: resident memory summed, MiB
    local kib=0 pid
    for pid in "$@"; do kib=$((kib + $(awk '/VmRSS/ {print $2}' "/proc/$pid/status"))); done
    awk -v k="$kib" 'BEGIN {printf "%.1f", k / 1024}'
}
# load PORT SECONDS: the three paths at once, CONNECTIONS in all; prints the
# requests and non-2xx answers summed over the three.
load() {
    local each=$((CONNECTIONS / 3)) path
    for path in json random cached; do
        wrk -t1 -c"$each" -d"$2s" "http://127.0.0.1:$1/$path" >"$work/wrk-$path.txt" &
    done
    wait
    cat "$work"/wrk-*.txt | awk '/requests in/ {r += $1} /Non-2xx/ {e += $NF} /Socket errors/ {s += 1}
        END {printf "%d requests, %d non-2xx, %d with socket errors", r, e, s}'
}

nginx_workers=$(pgrep -P "$(cat "$work/nginx.pid")" | tr '\n' ' ')
# shellcheck disable=SC2086
echo "idle: bulwark $(rss_mib $SERVER_PID) MiB, nginx $(rss_mib $nginx_workers) MiB"
# shellcheck disable=SC2086
echo "nginx, 1 minute of $CONNECTIONS connections: $(load "$NGINX_PORT" 60); RSS $(rss_mib $nginx_workers) MiB"
echo "bulwark, $MINUTES minutes of $CONNECTIONS connections (RSS after each minute):"
for minute in $(seq "$MINUTES"); do
    echo "  minute $minute: $(load "$BULWARK_PORT" 60); RSS $(rss_mib $SERVER_PID) MiB"
done
echo "bulwark after the load: RSS $(rss_mib $SERVER_PID) MiB"
