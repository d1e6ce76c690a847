#!/usr/bin/env bash
# Push benchmark: 10,000 clients (half WebSocket, half long-poll by default) over 50
# topics, each on 1-5 random topics, 100 publications a second. Then, in the same
# run, the reference (bench/push-ref: the plainest WebSocket fan-out) with the same
# number of clients, all WebSocket, and the ratios. Loopback only, bounded in time.
#
#   bench/push.sh [push-load options, e.g. --clients 2000 --websocket-share 1.0]
#   REFERENCE=0 bench/push.sh ...   # Bulwark only
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8200}
REF_PORT=${REF_PORT:-8201}
REFERENCE=${REFERENCE:-1}
# Each side holds one descriptor per client: raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)"
cargo build --profile dist -q -p bulwark -p push-load -p push-ref
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null || true' EXIT

# Runs push-load against the server on $1 (pid $2) with the remaining options.
load() {
    local port=$1 pid=$2
    shift 2
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/json" >/dev/null && break; sleep 0.1; done
    sleep 0.5
    target/dist/push-load --url "http://127.0.0.1:$port" --pid "$pid" "$@"
}

echo "== Bulwark"
target/dist/bulwark serve --sites bench/sites --listen "127.0.0.1:$PORT" --access-log off \
    >/tmp/bulwark-push-bench.log 2>&1 &
server=$!
load "$PORT" "$server" "$@" | tee /tmp/bulwark-push-bench.out
kill "$server"; wait "$server" 2>/dev/null || true; server=""
[ "$REFERENCE" = 1 ] || exit 0

echo "== Reference (bench/push-ref), all WebSocket"
sleep 2 # let the closed connections leave TIME_WAIT's way
target/dist/push-ref "127.0.0.1:$REF_PORT" >/tmp/push-ref-bench.log 2>&1 &
server=$!
load "$REF_PORT" "$server" "$@" --websocket-share 1.0 | tee /tmp/push-ref-bench.out

# The summary lines: key=value pairs.
value() { grep '^summary' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
awk -v bp="$(value /tmp/bulwark-push-bench.out p99_ms)" -v rp="$(value /tmp/push-ref-bench.out p99_ms)" \
    -v bc="$(value /tmp/bulwark-push-bench.out cpu)" -v rc="$(value /tmp/push-ref-bench.out cpu)" \
    'BEGIN { printf "== Bulwark / reference: p99 %.2fx (%s vs %s ms), server CPU %.2fx (%s%% vs %s%%)\n", bp/rp, bp, rp, bc/rc, bc, rc }'
