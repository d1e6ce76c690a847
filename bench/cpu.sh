#!/usr/bin/env bash
# Where a request's time goes: Bulwark against nginx (2 workers) answering the
# same bytes as bench/http.sh has it do (`/cached` as a file, other paths from
# its configuration: `return 200`), alternated over ROUNDS, each run printing requests/s,
# the server's user and system CPU per request (from /proc, all its threads or
# workers) and how many cores it kept busy. Requests per second drift by 10-30%
# between rounds; CPU per request is steadier, and says whether a gap is work
# (more CPU per request) or waiting (fewer cores busy).
#
#   bench/cpu.sh                        # /cached, 3 rounds, wrk -t1 -c100 -d5s
#   ROUNDS=5 WRK="-t2 -c50" bench/cpu.sh /json
#   BULWARK_BIN=/path/to/bulwark ARGS="--threads 4" bench/cpu.sh
#   AGAINST_BIN=/path/to/base/bulwark BULWARK_BIN=... bench/cpu.sh  # two Bulwarks, no nginx
#   HYPER=1 bench/cpu.sh /json          # and hyper alone (bench/http-ref) in each round
set -euo pipefail
cd "$(dirname "$0")/.."
URL_PATH=${1:-/cached}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
WRK=${WRK:--t1 -c100}
BULWARK_PORT=${BULWARK_PORT:-8100}
NGINX_PORT=${NGINX_PORT:-8101}
REF_PORT=${REF_PORT:-8102}

# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
need nginx nginx-light
BULWARK_BIN=${BULWARK_BIN:-target/dist/bulwark}
[ "$BULWARK_BIN" != target/dist/bulwark ] || cargo build --profile dist -q -p bulwark
[ "${HYPER:-}" != 1 ] || cargo build --profile dist -q -p http-ref
ulimit -n "$(ulimit -Hn)"
ticks=$(getconf CLK_TCK)

# bulwark [BIN]: BIN (or BULWARK_BIN) serving bench/sites; sets SERVER_PID.
bulwark() {
    # shellcheck disable=SC2086 # ARGS: flags, split on purpose
    "${1:-$BULWARK_BIN}" serve --sites bench/sites --listen "127.0.0.1:$BULWARK_PORT" \
        --access-log off ${ARGS:-} >"$work/bulwark.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$BULWARK_PORT/json" >/dev/null && break; sleep 0.1; done
}

# The bytes and type Bulwark answers, for nginx to answer too.
bulwark
name=${URL_PATH#/}
mkdir -p "$work/static"
kind=$(curl -s -o "$work/static/$name" -w '%{content_type}' "http://127.0.0.1:$BULWARK_PORT$URL_PATH")
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
if [ "$URL_PATH" = /cached ]; then
    locations="location = $URL_PATH { default_type '${kind%%;*}'; root $work/static; }"
else
    locations="location = $URL_PATH { default_type '${kind%%;*}'; return 200 '$(cat "$work/static/$name")'; }"
fi

# user and system clock ticks of the given processes, summed
ticks_of() {
    local user=0 system=0 u s
    for pid in "$@"; do
        read -r u s < <(awk '{print $14, $15}' "/proc/$pid/stat")
        user=$((user + u))
        system=$((system + s))
    done
    echo "$user $system"
}
per_request() { awk -v a="$1" -v b="$2" -v n="$3" -v t="$ticks" 'BEGIN {printf "%.2f", (b - a) / t * 1e6 / n}'; }

# measure NAME URL PID...: one run, its line of the table
measure() {
    local name=$1 url=$2 out user0 system0 user1 system1 requests rate
    shift 2
    # shellcheck disable=SC2086 # WRK: flags, split on purpose
    wrk $WRK -d2s "$url" >/dev/null
    read -r user0 system0 < <(ticks_of "$@")
    # shellcheck disable=SC2086
    out=$(wrk $WRK -d"${DURATION}s" "$url")
    read -r user1 system1 < <(ticks_of "$@")
    requests=$(awk '/requests in/ {print $1}' <<<"$out")
    rate=$(awk '/Requests\/sec/ {printf "%d", $2}' <<<"$out")
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$rate" \
        "$(per_request "$user0" "$user1" "$requests")" "$(per_request "$system0" "$system1" "$requests")" \
        "$(awk -v a=$((user0 + system0)) -v b=$((user1 + system1)) -v t="$ticks" -v d="$DURATION" \
            'BEGIN {printf "%.2f", (b - a) / t / d}')"
}

echo "$URL_PATH, wrk $WRK -d${DURATION}s after 2 s of warm-up, $ROUNDS rounds alternated${ARGS:+, bulwark $ARGS}"
echo "| round, server | req/s | user µs a request | system µs a request | cores busy |"
echo "| --- | --- | --- | --- | --- |"
for round in $(seq "$ROUNDS"); do
    bulwark
    measure "$round bulwark" "http://127.0.0.1:$BULWARK_PORT$URL_PATH" "$SERVER_PID"
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    if [ -n "${AGAINST_BIN:-}" ]; then
        bulwark "$AGAINST_BIN"
        measure "$round against" "http://127.0.0.1:$BULWARK_PORT$URL_PATH" "$SERVER_PID"
        kill "$SERVER_PID"
        wait "$SERVER_PID" 2>/dev/null || true
        continue
    fi
    if [ "${HYPER:-}" = 1 ]; then
        # The same bytes from memory (its own type: json or html by name).
        target/dist/http-ref "127.0.0.1:$REF_PORT" "$work/static" >"$work/http-ref.log" 2>&1 &
        SERVER_PID=$!
        for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$REF_PORT$URL_PATH" && break; sleep 0.1; done
        measure "$round hyper alone" "http://127.0.0.1:$REF_PORT$URL_PATH" "$SERVER_PID"
        kill "$SERVER_PID"
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    start_nginx "$NGINX_PORT" "$locations"
    # shellcheck disable=SC2046 # one pid per worker
    measure "$round nginx" "http://127.0.0.1:$NGINX_PORT$URL_PATH" $(pgrep -P "$(cat "$work/nginx.pid")")
    kill "$(cat "$work/nginx.pid")"
    while [ -f "$work/nginx.pid" ]; do sleep 0.1; done
done
