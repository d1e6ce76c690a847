#!/usr/bin/env bash
# Push benchmark: 10,000 clients (half WebSocket, half long-poll) over 50 topics,
# each on 1-5 random topics, 100 publications a second. Loopback only, bounded in
# time. Usage: bench/push.sh [push-load options, e.g. --clients 2000 --duration 10]
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8200}
# Each side holds one descriptor per client: raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)"
cargo build --release -q -p bulwark -p push-load
target/release/bulwark serve --sites bench/sites --listen "127.0.0.1:$PORT" --access-log off \
    >/tmp/bulwark-push-bench.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/json" >/dev/null && break; sleep 0.1; done
sleep 0.5
target/release/push-load --url "http://127.0.0.1:$PORT" --pid "$SERVER" "$@"
