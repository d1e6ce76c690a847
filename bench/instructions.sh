#!/usr/bin/env bash
# Instructions a request costs, counted by callgrind: exact and the same on a
# fast or a slow day, where requests per second drift by 10% between rounds
# and 2x between sessions. Counts the server's own code and libraries (not
# the kernel's work for the socket, nor the client's), so it finds what a
# change added to the request path, down to the function; wrk (bench/ab.sh)
# still says what it costs in time.
#
#   bench/instructions.sh BIN [PATH] [HOST]     # default /json on bench.localhost
#   bench/instructions.sh target/dist/bulwark /cached
#   LOGON=1 bench/instructions.sh BIN / localhost   # the starter's front page, logged on
#   LOGON=1 STARTER=DIR bench/instructions.sh BIN /   # the starter site copied from DIR
#   LOGON=0 bench/instructions.sh BIN /en/ localhost   # the starter, anonymous: from the page cache
#   NEW_CONNECTIONS=1 bench/instructions.sh BIN /random   # a new connection for every request (httperf)
#   LOGON=0 HEADER='Accept-Language: nl-BE,nl;q=0.9,en;q=0.8' STATUS=302 bench/instructions.sh BIN / localhost
#       # one more request header; the starter's / answers 302 to the visitor's language
#
# LOGON=1: the starter site (written by a first plain start of BIN, or copied
# from STARTER, e.g. another version's, so two engines render the same pages)
# serves beside the benchmark site, and every request carries the admin's
# session cookie: the page rendered per request, as a logged-on editor gets it.
# LOGON=0: the starter beside it the same way, asked anonymously (cached pages).
#
# The server runs under valgrind (about 50x slower), serves wrk -c4 for 3 s
# to warm up (NEW_CONNECTIONS=1: httperf, 400 connections a second, each
# closed after its one request), then the counters are zeroed and 6 s more
# are counted. Prints
# instructions per request and keeps the profile for callgrind_annotate
# (--inclusive=yes) in bench/instructions-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(readlink -f "${1:?the bulwark binary to measure}")
URL_PATH=${2:-/json}
HOST=${3:-bench.localhost}
PORT=${PORT:-8710}

# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
need valgrind valgrind
[ "${NEW_CONNECTIONS:-}" = 1 ] && need httperf httperf

mkdir -p "$work/sites" bench/instructions-out
password="instructions-bench"
if [ -n "${LOGON:-}" ]; then
    if [ -n "${STARTER:-}" ]; then
        cp -r "$STARTER" "$work/sites/default"
    else
        (cd "$work" && BULWARK_LOG=warn BULWARK_ADMIN_PASSWORD="$password" \
            exec "$BIN" serve --listen "127.0.0.1:$PORT" --access-log off) >"$work/first.log" 2>&1 &
        SERVER_PID=$!
        for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.2; done
        kill "$SERVER_PID"
        wait "$SERVER_PID" 2>/dev/null || true
    fi
fi
cp -r bench/sites/bench "$work/sites/bench"
[ -n "${LOGON:-}" ] && sed -i '/^default *=/d' "$work/sites/bench/site.toml"
out="$PWD/bench/instructions-out/$(basename "$BIN")-$(echo "$URL_PATH" | tr -c 'a-z0-9' '_').callgrind"
rm -f "$out" "$out".*
(cd "$work" && BULWARK_LOG=warn BULWARK_ADMIN_PASSWORD="$password" \
    exec valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$BIN" serve --listen "127.0.0.1:$PORT" --access-log off) >"$work/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 600); do
    curl -sf -o /dev/null -H "Host: $HOST" "http://127.0.0.1:$PORT$URL_PATH" && break
    sleep 0.2
done
headers=(-H "Host: $HOST")
[ -n "${HEADER:-}" ] && headers+=(-H "$HEADER")
if [ "${LOGON:-}" = 1 ]; then
    cookie=$(logon_cookie "http://127.0.0.1:$PORT" "$password" -H "Host: $HOST")
    [ -n "$cookie" ] || { echo "logon failed" >&2; exit 1; }
    headers+=(-H "Cookie: $cookie")
fi
answer=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "${headers[@]}" "http://127.0.0.1:$PORT$URL_PATH")
status=${STATUS:-200}
[ "${answer%% *}" = "$status" ] || { echo "$URL_PATH answers $answer, not $status" >&2; exit 1; }
echo "$URL_PATH: $status, ${answer#* } bytes"
# load SECONDS: requests for that long; prints how many were answered.
load() {
    if [ "${NEW_CONNECTIONS:-}" = 1 ]; then
        # One new connection per request, 400 a second (the server runs 50x
        # slower under valgrind): for light paths. Only 2xx answers are
        # counted, so a page too slow to keep up (one that times out) comes
        # out dearer than it is. httperf sends its own Host header
        # (--server-name sets it).
        local add=""
        for ((i = 3; i < ${#headers[@]}; i += 2)); do add+="${headers[i]}\\n"; done
        httperf --hog --server 127.0.0.1 --server-name "$HOST" --port "$PORT" --uri "$URL_PATH" \
            --add-header "$add" --num-conns $((400 * $1)) --rate 400 --timeout 5 |
            awk '/^Reply status:/ {split($4, ok, "="); print ok[2]}'
    else
        wrk -t1 -c4 -d"$1s" "${headers[@]}" "http://127.0.0.1:$PORT$URL_PATH" |
            awk '/requests in/ {print $1}'
    fi
}
load 3 >/dev/null
callgrind_control -z "$SERVER_PID" >/dev/null
requests=$(load 6)
callgrind_control -d "$SERVER_PID" >/dev/null
dump=$(ls -t "$out".* | head -1)
instructions=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
echo "$(basename "$BIN") $URL_PATH: $requests requests, $((instructions / requests)) instructions each"
echo "profile: $dump (callgrind_annotate --inclusive=yes $dump)"
