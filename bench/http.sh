#!/usr/bin/env bash
# HTTP benchmark: Bulwark against nginx serving a fixed body of the same size, in the
# same run, on loopback. Prints requests/s, latency and the Bulwark/nginx ratio.
#
#   bench/http.sh                 # 10 s per scenario, 100 connections
#   DURATION=30 CONNECTIONS=256 bench/http.sh
#   CONNECTIONS=3000 BULWARK_BIN=/path/to/bulwark bench/http.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-100}
BULWARK_PORT=${BULWARK_PORT:-8100}
NGINX_PORT=${NGINX_PORT:-8101}

# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
need nginx nginx-light

start_bench_bulwark "$BULWARK_PORT"

json_body=$(curl -s "http://127.0.0.1:$BULWARK_PORT/json")
# The random page varies in length (1-20 items); nginx returns one of median size.
random_body=$(for _ in $(seq 200); do curl -s "http://127.0.0.1:$BULWARK_PORT/random" | wc -c; done | sort -n | sed -n 100p)
random_fixed=$(head -c "$random_body" /dev/zero | tr '\0' 'x')
# The cached page: nginx serves the very same bytes from a file.
mkdir -p "$work/static"
curl -s "http://127.0.0.1:$BULWARK_PORT/cached" >"$work/static/cached"

start_nginx "$NGINX_PORT" "
        location = /json { default_type application/json; return 200 '$json_body'; }
        location = /random { default_type text/html; return 200 '$random_fixed'; }
        location = /cached { default_type text/html; root $work/static; }"

rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
lat() { awk '/ 99%/ {print $2}' "$1"; }
run() { wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$1" >"$2"; }

echo "scenario  bulwark_req/s  nginx_req/s  ratio  bulwark_p99  nginx_p99"
for path in json random cached; do
    run "http://127.0.0.1:$BULWARK_PORT/$path" "$work/b-$path.txt"
    run "http://127.0.0.1:$NGINX_PORT/$path" "$work/n-$path.txt"
    b=$(rate "$work/b-$path.txt"); n=$(rate "$work/n-$path.txt")
    ratio=$(awk -v b="$b" -v n="$n" 'BEGIN {printf "%.2f", b / n}')
    printf '%-8s  %13s  %11s  %5s  %11s  %9s\n' "/$path" "$b" "$n" "$ratio" "$(lat "$work/b-$path.txt")" "$(lat "$work/n-$path.txt")"
    for side in b n; do
        grep "Non-2xx\|Socket errors" "$work/$side-$path.txt" | sed "s|^|  $side /$path: |" || true
    done
done
echo "(wrk -t1 -c$CONNECTIONS -d${DURATION}s; random page body: $random_body bytes; bulwark RSS: $(ps -o rss= -p $SERVER_PID) KiB)"
