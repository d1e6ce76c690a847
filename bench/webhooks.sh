#!/usr/bin/env bash
# Webhooks firing cost a page nothing (issue 31): the p99 of a cached article
# page while CHANGES changes are made through the JSON API, once with no
# webhook and once with a webhook subscribed to every event (a receiver on
# loopback answering 200 at once), alternated over ROUNDS rounds; and how long
# the receiver takes to get every message.
# The page reader pauses 1 ms after each answer (bench/paced.lua) so that the
# p99 measures the server, not wrk and the server fighting for two cores.
# Loopback only, bounded: ROUNDS x 2 x DURATION seconds of load.
# Usage: ROUNDS=2 DURATION=10 CHANGES=1000 [BULWARK_BIN=...] bench/webhooks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10}
CHANGES=${CHANGES:-1000}
CONNECTIONS=${CONNECTIONS:-10}
PORT=${PORT:-8520}
HOOK_PORT=${HOOK_PORT:-8521}
# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
if [ -n "${BULWARK_BIN:-}" ]; then
    bin=$BULWARK_BIN
else
    cargo build --profile dist -q -p bulwark
    bin="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/dist/bulwark"
fi

site="$work/sites/default"
mkdir -p "$work/sites"
cp -r sites/default "$site"
rm -rf "$site/data"
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
sed -i "s/# token = \"generated\"/token = \"$token\"/" "$site/site.toml"

# The receiver: answers every POST 200 at once and counts them.
cat >"$work/receiver.py" <<'PY'
import http.server, sys
count = 0
class Hook(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        global count
        self.rfile.read(int(self.headers.get("content-length", 0)))
        count += 1
        # One write: headers and body in two segments would meet the client's
        # delayed ACK (Nagle), 40 ms a message, and measure that.
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    def do_GET(self):
        body = str(count).encode()
        self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
PY
python3 "$work/receiver.py" "$HOOK_PORT" &
RECEIVER_PID=$!
(cd "$work" && BULWARK_ADMIN_PASSWORD=bench-admin-password exec "$bin" serve --listen "127.0.0.1:$PORT" --access-log off) >"$work/server.log" 2>&1 &
SERVER_PID=$!
trap 'kill $RECEIVER_PID $SERVER_PID 2>/dev/null || true; bench_cleanup' EXIT
url="http://127.0.0.1:$PORT"
for _ in $(seq 200); do curl -sf "$url/" >/dev/null && break; sleep 0.1; done
api() { curl -s -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }
page=$(curl -s "$url/articles" | grep -o 'href="/page/[0-9]*/[^"]*"' | head -1 | sed 's/href="//; s/"$//')
received() { curl -s "http://127.0.0.1:$HOOK_PORT/"; }

# CHANGES new articles, one request at a time, as fast as the API takes them.
changes() {
    for n in $(seq "$CHANGES"); do
        api -o /dev/null -d "{\"category\":\"article\",\"published\":true,\"props\":{\"title\":\"Change $n\"}}" "$url/api/rsc"
    done
}
measure() {
    wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/paced.lua "$url$page" -- 1 >"$work/out.txt" &
    local wrk_pid=$! began
    began=$(date +%s.%N)
    changes
    awk -v s="$began" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }' >"$work/changes-took"
    wait "$wrk_pid"
    awk '/ 99%/ {print $2}' "$work/out.txt"
}
ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) v = v / 1000; else if (v ~ /ms$/) v = v + 0; else if (v ~ /s$/) v = v * 1000; print v }'; }

echo "== a cached article's p99 while $CHANGES changes are made, without and with a webhook (wrk -t1 -c$CONNECTIONS -d${DURATION}s, paced 1 ms)"
wrk -t1 -c"$CONNECTIONS" -d2s -s bench/paced.lua "$url$page" -- 1 >/dev/null
without=0 with=0 hook=""
for round in $(seq "$ROUNDS"); do
    [ -n "$hook" ] && api -o /dev/null -X DELETE "$url/api/webhooks/$hook"
    p=$(measure)
    echo "round $round, no webhook:        p99 $p"
    without=$(awk -v a="$without" -v b="$(ms "$p")" 'BEGIN { print a + b }')
    hook=$(api -d "{\"url\":\"http://127.0.0.1:$HOOK_PORT/hook\"}" "$url/api/webhooks" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    before=$(received)
    started=$(date +%s.%N)
    p=$(measure)
    echo "round $round, webhook firing:   p99 $p"
    with=$(awk -v a="$with" -v b="$(ms "$p")" 'BEGIN { print a + b }')
    # Each change is two messages (created, published).
    want=$((before + 2 * CHANGES))
    for _ in $(seq 1200); do [ "$(received)" -ge "$want" ] && break; sleep 0.1; done
    echo "  the receiver had every message $(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s after the changes began, which took $(cat "$work/changes-took") s ($(received) of $want)"
done
awk -v a="$without" -v b="$with" 'BEGIN { printf "p99 with webhooks / without: %.2f (sum of %d rounds each)\n", b / a, '"$ROUNDS"' }'
