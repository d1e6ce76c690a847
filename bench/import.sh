#!/usr/bin/env bash
# Imports at speed (issue 32): resources per second and peak memory for a
# WordPress export (WXR) and a Bulwark export (JSON lines), each at a small and
# a ten times larger size (streaming: the peak memory should barely grow with
# the file), and the p99 of a page the site serves while the largest import
# runs, against the same page's p99 with nothing importing.
# The page reader pauses 1 ms after each answer (bench/paced.lua), as in
# bench/webhooks.sh. Loopback only; bounded by the sizes below.
# Usage: WXR_POSTS=10000 JSONL_RESOURCES=100000 DURATION=10 [BULWARK_BIN=...] bench/import.sh
set -euo pipefail
cd "$(dirname "$0")/.."
WXR_POSTS=${WXR_POSTS:-10000}
JSONL_RESOURCES=${JSONL_RESOURCES:-100000}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-10}
PORT=${PORT:-8530}
# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
need /usr/bin/time time
if [ -n "${BULWARK_BIN:-}" ]; then
    bin=$BULWARK_BIN
else
    cargo build --profile dist -q -p bulwark
    bin="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/dist/bulwark"
fi

# fresh NAME: a starter site in $work/NAME/sites/default, its database made.
fresh() {
    local dir="$work/$1"
    mkdir -p "$dir/sites"
    cp -r sites/default "$dir/sites/default"
    rm -rf "$dir/sites/default/data"
    (cd "$dir" && BULWARK_ADMIN_PASSWORD=bench-admin-password "$bin" user list >/dev/null 2>&1)
    echo "$dir"
}

# timed DIR ITEMS ARGS...: an import in DIR; prints seconds, items/s, peak RSS.
timed() {
    local dir=$1 items=$2
    shift 2
    (cd "$dir" && BULWARK_ADMIN_PASSWORD=bench-admin-password /usr/bin/time -v "$bin" import "$@" -q) 2>"$work/time.txt"
    local secs rss
    secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$work/time.txt")
    awk -v n="$items" -v s="$secs" -v r="$rss" 'BEGIN { printf "%8d items in %6.1f s: %7.0f items/s, peak %4d MiB\n", n, s, n / s, r }'
}

echo "== WordPress export (posts, each with its keywords; comments on every fifth)"
for n in $((WXR_POSTS / 10)) "$WXR_POSTS"; do
    python3 bench/import-gen.py wxr "$n" >"$work/wp-$n.xml"
    dir=$(fresh "wxr-$n")
    printf "%-12s %6s MB  " "$n posts" "$(du -m "$work/wp-$n.xml" | cut -f1)"
    timed "$dir" "$n" wordpress default "$work/wp-$n.xml"
done

echo "== Bulwark export (JSON lines: articles and one edge each)"
for n in $((JSONL_RESOURCES / 10)) "$JSONL_RESOURCES"; do
    python3 bench/import-gen.py jsonl "$n" >"$work/site-$n.jsonl"
    dir=$(fresh "jsonl-$n")
    printf "%-12s %6s MB  " "$n rsc" "$(du -m "$work/site-$n.jsonl" | cut -f1)"
    timed "$dir" "$n" default "$work/site-$n.jsonl"
done

echo "== a page's p99 while the site imports $JSONL_RESOURCES resources (wrk -t1 -c$CONNECTIONS -d${DURATION}s, paced 1 ms)"
dir=$(fresh serving)
(cd "$dir" && BULWARK_ADMIN_PASSWORD=bench-admin-password exec "$bin" serve --listen "127.0.0.1:$PORT" --access-log off) >"$work/server.log" 2>&1 &
SERVER_PID=$!
url="http://127.0.0.1:$PORT"
for _ in $(seq 200); do curl -sf "$url/" >/dev/null && break; sleep 0.1; done
page=$(curl -s "$url/articles" | grep -o 'href="/page/[0-9]*/[^"]*"' | head -1 | sed 's/href="//; s/"$//')
p99() { awk '/ 99%/ {print $2}' "$1"; }
wrk -t1 -c"$CONNECTIONS" -d2s -s bench/paced.lua "$url$page" -- 1 >/dev/null
wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/paced.lua "$url$page" -- 1 >"$work/quiet.txt"
wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/paced.lua "$url$page" -- 1 >"$work/busy.txt" &
wrk_pid=$!
(cd "$dir" && BULWARK_ADMIN_PASSWORD=bench-admin-password "$bin" import default "$work/site-$JSONL_RESOURCES.jsonl" -q) &
import_pid=$!
wait "$wrk_pid"
echo "quiet:     p99 $(p99 "$work/quiet.txt"), $(awk '/Requests\/sec/ {print $2}' "$work/quiet.txt") req/s"
echo "importing: p99 $(p99 "$work/busy.txt"), $(awk '/Requests\/sec/ {print $2}' "$work/busy.txt") req/s"
wait "$import_pid"
echo "(the import went on after the measured ${DURATION} s and finished)"
