#!/usr/bin/env bash
# The voting site of seed 000 on three Bulwark nodes sharing one PostgreSQL
# database, behind haproxy, all on loopback; the load driver
# (bench/cluster-load) plays whole voters at a target rate, node 2 is killed
# with SIGKILL in the middle of the run and started again later, and at the
# end every vote the driver was told was accepted is looked up in the database.
#
#   bench/cluster/run.sh                       # defaults below
#   RATE=40 DURATION=120 bench/cluster/run.sh  # voters a second, seconds of arrivals
#
# Settings (environment): RATE (voters/s, 20), DURATION (s, 120), THINK_MS
# (mean pause between a voter's pages, 300), KILL_AT (s into the run, half of
# DURATION), DOWN_FOR (s, 15), BULWARK_BIN (default target/release/bulwark,
# built here), DRIVER_THREADS (1), NODE_THREADS (worker threads per node, 1).
# PostgreSQL comes from scripts/ensure-postgres.sh; haproxy from Debian.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

RATE=${RATE:-20}
DURATION=${DURATION:-120}
THINK_MS=${THINK_MS:-300}
KILL_AT=${KILL_AT:-$((DURATION / 2))}
DOWN_FOR=${DOWN_FOR:-15}
DRIVER_THREADS=${DRIVER_THREADS:-1}
NODE_THREADS=${NODE_THREADS:-1}
LB_PORT=18180
NODE_PORTS=(18181 18182 18183)

# shellcheck source=../../scripts/ensure-postgres.sh
source scripts/ensure-postgres.sh
PG_URL=$BULWARK_TEST_PG_URL
command -v haproxy >/dev/null || apt-get install -y haproxy >/dev/null

if [ -z "${BULWARK_BIN:-}" ]; then
    cargo build --release -p bulwark -p cluster-load
    BULWARK_BIN=$ROOT/target/release/bulwark
else
    cargo build --release -p cluster-load
fi
DRIVER=$ROOT/target/release/cluster-load

WORK=$(mktemp -d /tmp/bulwark-cluster-bench.XXXXXX)
SCHEMA=bench_voting_$$
RUN=r$$
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for i in 1 2 3; do [ -f "$WORK/node$i.pid" ] && kill "$(cat "$WORK/node$i.pid")" 2>/dev/null || true; done
    psql "$PG_URL" -q -c "DROP SCHEMA IF EXISTS \"$SCHEMA\" CASCADE" >/dev/null 2>&1 || true
    echo "logs kept in $WORK"
}
trap cleanup EXIT

# The site as it ships, on PostgreSQL with the cluster module.
mkdir -p "$WORK/sites"
cp -r sites/voting "$WORK/sites/voting"
SITE=$WORK/sites/voting/site.toml
sed -i 's/^modules = \["push", "auth", "admin", "voting"\]/modules = ["push", "auth", "admin", "voting", "cluster"]/' "$SITE"
grep -q '"cluster"' "$SITE" || { echo "site.toml: modules line not found" >&2; exit 1; }
cat >> "$SITE" <<TOML

[database]
url = "$PG_URL"
schema = "$SCHEMA"
max_connections = 8

[cluster]
heartbeat_ms = 500
TOML

start_node() {
    local i=$1 port=${NODE_PORTS[$(($1 - 1))]}
    BULWARK_NODE=node$i BULWARK_ADMIN_PASSWORD=bench-admin-password BULWARK_THREADS=$NODE_THREADS \
        "$BULWARK_BIN" serve --sites "$WORK/sites" --listen "127.0.0.1:$port" --access-log off \
        >>"$WORK/node$i.log" 2>&1 &
    echo $! >"$WORK/node$i.pid"
    for _ in $(seq 1 200); do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: voting.localhost' "http://127.0.0.1:$port/cluster/health")" = 200 ]; then
            return 0
        fi
        sleep 0.1
    done
    echo "node $i did not become healthy; see $WORK/node$i.log" >&2
    exit 1
}

# The first node makes the schema and the projects; the others join it.
start_node 1
start_node 2
start_node 3

cat >"$WORK/haproxy.cfg" <<CFG
global
    maxconn 8000
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout tunnel 1h
    option http-keep-alive
    option redispatch
    retries 3
frontend www
    bind 127.0.0.1:$LB_PORT
    default_backend nodes
backend nodes
    balance roundrobin
    option httpchk
    http-check send meth GET uri /cluster/health hdr Host voting.localhost
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions
    server node1 127.0.0.1:${NODE_PORTS[0]} check
    server node2 127.0.0.1:${NODE_PORTS[1]} check
    server node3 127.0.0.1:${NODE_PORTS[2]} check
CFG
haproxy -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.log" 2>&1 &
PIDS+=($!)
HAPROXY_PID=$!
sleep 1

cpu_seconds() { # utime+stime of a process and its threads, in seconds
    awk '{print ($14 + $15) / 100}' "/proc/$1/stat" 2>/dev/null || echo 0
}
postgres_cpu() {
    local total=0 pid
    for pid in $(pgrep -x postgres || true); do
        total=$(echo "$total + $(cpu_seconds "$pid")" | bc)
    done
    echo "$total"
}
pg_before=$(postgres_cpu)

echo "run $RUN: $RATE voters/s for $DURATION s, think $THINK_MS ms; node 2 killed at $KILL_AT s for $DOWN_FOR s; logs in $WORK"
"$DRIVER" --url "http://127.0.0.1:$LB_PORT" --rate "$RATE" --duration "$DURATION" --think-ms "$THINK_MS" \
    --db-url "$PG_URL" --schema "$SCHEMA" --run "$RUN" --threads "$DRIVER_THREADS" \
    >"$WORK/driver.txt" 2>"$WORK/driver.progress" &
DRIVER_PID=$!
PIDS+=($DRIVER_PID)

sleep "$KILL_AT"
node2_cpu_before_kill=$(cpu_seconds "$(cat "$WORK/node2.pid")")
kill -9 "$(cat "$WORK/node2.pid")"
echo "$(date +%T) node 2 killed (SIGKILL)"
sleep "$DOWN_FOR"
start_node 2
echo "$(date +%T) node 2 back"

set +e
wait $DRIVER_PID
driver_status=$?
set -e
cat "$WORK/driver.progress" | tail -3
cat "$WORK/driver.txt"
echo "cpu seconds: node1 $(cpu_seconds "$(cat "$WORK/node1.pid")"), node2 $node2_cpu_before_kill + $(cpu_seconds "$(cat "$WORK/node2.pid")") (before and after the kill), node3 $(cpu_seconds "$(cat "$WORK/node3.pid")"), haproxy $(cpu_seconds "$HAPROXY_PID"), postgres $(echo "$(postgres_cpu) - $pg_before" | bc)"
for i in 1 2 3; do
    echo "node $i health: $(curl -s -H 'Host: voting.localhost' "http://127.0.0.1:${NODE_PORTS[$((i - 1))]}/cluster/health")"
done
exit $driver_status
