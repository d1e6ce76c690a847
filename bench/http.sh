#!/usr/bin/env bash
# HTTP benchmark: Bulwark against nginx serving a fixed body of the same size, in the
# same run, on loopback. Prints requests/s, latency and the Bulwark/nginx ratio.
# A second reference, bench/http-ref (the plainest hyper server, the same bytes
# from memory), says how much of a gap to nginx is hyper's and tokio's before
# Bulwark does anything: its rate, Bulwark's ratio to it and its own to nginx.
#
#   bench/http.sh                 # 10 s per scenario, 100 connections
#   DURATION=30 CONNECTIONS=256 bench/http.sh
#   CONNECTIONS=3000 BULWARK_BIN=/path/to/bulwark bench/http.sh
#   REF_ARGS=--per-core bench/http.sh   # the reference with an event loop per core
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-100}
BULWARK_PORT=${BULWARK_PORT:-8100}
NGINX_PORT=${NGINX_PORT:-8101}
REF_PORT=${REF_PORT:-8102}

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

# The hyper reference answers the same bytes.
mkdir -p "$work/ref"
printf '%s' "$json_body" >"$work/ref/json"
printf '%s' "$random_fixed" >"$work/ref/random"
cp "$work/static/cached" "$work/ref/cached"
cargo build --profile dist -q -p http-ref
# shellcheck disable=SC2086 # REF_ARGS: flags, split on purpose
target/dist/http-ref "127.0.0.1:$REF_PORT" "$work/ref" ${REF_ARGS:-} >"$work/http-ref.log" 2>&1 &
REF_PID=$!
trap 'kill "$REF_PID" 2>/dev/null || true; bench_cleanup' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$REF_PORT/json" >/dev/null && break; sleep 0.1; done

start_nginx "$NGINX_PORT" "
        location = /json { default_type application/json; return 200 '$json_body'; }
        location = /random { default_type text/html; return 200 '$random_fixed'; }
        location = /cached { default_type text/html; root $work/static; }"

rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
lat() { awk '/ 99%/ {print $2}' "$1"; }
run() { wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$1" >"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

echo "scenario  bulwark_req/s  nginx_req/s  ratio  bulwark_p99  nginx_p99  hyper_req/s  bulwark/hyper  hyper/nginx"
for path in json random cached; do
    run "http://127.0.0.1:$BULWARK_PORT/$path" "$work/b-$path.txt"
    run "http://127.0.0.1:$NGINX_PORT/$path" "$work/n-$path.txt"
    run "http://127.0.0.1:$REF_PORT/$path" "$work/h-$path.txt"
    b=$(rate "$work/b-$path.txt"); n=$(rate "$work/n-$path.txt"); h=$(rate "$work/h-$path.txt")
    printf '%-8s  %13s  %11s  %5s  %11s  %9s  %11s  %13s  %11s\n' "/$path" "$b" "$n" "$(ratio "$b" "$n")" \
        "$(lat "$work/b-$path.txt")" "$(lat "$work/n-$path.txt")" "$h" "$(ratio "$b" "$h")" "$(ratio "$h" "$n")"
    for side in b n h; do
        grep "Non-2xx\|Socket errors" "$work/$side-$path.txt" | sed "s|^|  $side /$path: |" || true
    done
done
echo "(wrk -t1 -c$CONNECTIONS -d${DURATION}s; random page body: $random_body bytes; bulwark RSS: $(ps -o rss= -p $SERVER_PID) KiB)"
