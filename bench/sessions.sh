#!/usr/bin/env bash
# Sessions under load (issue 13), on the starter site:
#   1. the front page for a logged-in member against the same page anonymous and
#      uncached (a twin rule of the front page with `cache = false`, so the page
#      cache answers neither): what the session lookup costs. Same wrk settings,
#      alternated twice, compared by the sum of both runs.
#   2. a logon storm: wrk sends JSON logons (3 wrong passwords to 1 right, over
#      STORM_ACCOUNTS accounts) while another wrk reads the cached front page; the
#      cached page's p99 quiet and during the storm, alternated twice. The page
#      reader pauses CACHED_PAUSE ms after each answer (bench/paced.lua): a
#      client that saturates both cores makes the quiet p99 a measure of wrk and
#      the server fighting for them (0.2 to 4 ms from run to run here).
#      `[auth] logon_attempts` is raised for the bench site so that the storm
#      hashes instead of getting 429 from the per-address throttle (every client
#      here is 127.0.0.1).
# Loopback only, bounded in time (about 100 s of load with the defaults).
# Usage: DURATION=10 CONNECTIONS=100 STORM_CONNECTIONS=16 [BULWARK_BIN=...] bench/sessions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-100}
CACHED_CONNECTIONS=${CACHED_CONNECTIONS:-10}
CACHED_PAUSE=${CACHED_PAUSE:-1}
STORM_CONNECTIONS=${STORM_CONNECTIONS:-16}
STORM_ACCOUNTS=${STORM_ACCOUNTS:-20}
PORT=${PORT:-8510}
# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
# BULWARK_BIN: a binary to measure instead of this tree's dist build (to
# compare two versions in one sitting).
if [ -n "${BULWARK_BIN:-}" ]; then
    bin=$BULWARK_BIN
else
    cargo build --profile dist -q -p bulwark
    bin="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/dist/bulwark"
fi

site="$work/sites/default"
mkdir -p "$work/sites"
cp -r sites/default "$site"
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
sed -i "s/# token = \"generated\"/token = \"$token\"/" "$site/site.toml"
cat >>"$site/site.toml" <<'TOML'

[auth]
logon_attempts = 1000000

[[dispatch]]
name = "home_uncached"
path = "/uncached"
controller = "template"
template = "home.tpl"
cache = false
TOML
add_user() { printf '%s\n' "$3" | BULWARK_LOG=warn "$bin" user add "$1" --group "$2" --sites "$work/sites" >/dev/null; }
add_user member members "bench-member-password"
for i in $(seq "$STORM_ACCOUNTS"); do add_user "storm$i" members "storm-password-$i"; done

(cd "$work" && exec "$bin" serve --listen "127.0.0.1:$PORT" --access-log off) >"$work/server.log" 2>&1 &
SERVER_PID=$!
url="http://127.0.0.1:$PORT"
for _ in $(seq 200); do curl -sf "$url/" >/dev/null && break; sleep 0.1; done
renders() { curl -s -H "Authorization: Bearer $token" "$url/api/stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['renders'])"; }
# CPU time in clock ticks (1/100 s): a process's, this script's waited-for
# children's (the load generators), and the whole machine's busy time. Other
# sessions may share the machine: what they used during a run is reported, as
# tail latencies on 2 cores depend on it.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
children_cpu() { awk '{print $16 + $17}' "/proc/$$/stat"; }
# The machine's busy time includes the loopback network's softirq time, which
# the kernel also counts in the process it ran on behalf of.
machine_cpu() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
usage_start() { usage0="$(machine_cpu) $(cpu "$SERVER_PID") $(children_cpu) ${1:+$(cpu "$1")}"; }
# usage_report [PID]: CPU used since usage_start [PID], in % of one core; PID is
# a load generator still running (the storm).
usage_report() {
    read -r m0 s0 c0 x0 <<<"$usage0"
    local s=$(($(cpu "$SERVER_PID") - s0)) c=$(($(children_cpu) - c0)) x=0
    [ -n "${1:-}" ] && x=$(($(cpu "$1") - x0))
    local m=$(($(machine_cpu) - m0))
    echo "  CPU (% of one core): server $((s / DURATION)), load generators $(((c + x) / DURATION)), anything else on the machine $(((m - s - c - x) / DURATION))"
}

session=$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' \
    -d '{"username":"member","password":"bench-member-password","remember":false}' "$url/api/auth/logon" |
    sed -n 's/^set-cookie: \(bulwark_session=[0-9a-f]*\).*/\1/Ip')
[ -n "$session" ] || { echo "logon as member failed" >&2; exit 1; }
curl -s -H "Cookie: $session" "$url/" | grep -q 'href="/logoff"' || { echo "the member's front page is not logged on" >&2; exit 1; }
curl -s "$url/uncached" | grep -q 'href="/logon"' || { echo "/uncached is not the anonymous front page" >&2; exit 1; }

run() { wrk -t1 -c"$1" -d"$2s" --latency "${@:3}" >"$work/out.txt"; }
rate() { awk '/Requests\/sec/ {print $2}' "$work/out.txt"; }
p99() { awk '/ 99%/ {print $2}' "$1"; }
report() {
    local errors
    errors=$(grep -E "Non-2xx|Socket errors" "$work/out.txt" | tr -s ' ' | paste -sd ';' || true)
    printf '%-40s %10s req/s  p50 %8s  p99 %8s  %s\n' "$1" "$(rate)" \
        "$(awk '/ 50%/ {print $2}' "$work/out.txt")" "$(p99 "$work/out.txt")" "${errors:-no errors}"
}

echo "== 1. front page: logged-in member vs anonymous uncached (wrk -t1 -c$CONNECTIONS -d${DURATION}s)"
run "$CONNECTIONS" 2 -H "Cookie: $session" "$url/"
run "$CONNECTIONS" 2 "$url/uncached"
member=0 anonymous=0
for round in 1 2; do
    usage_start
    run "$CONNECTIONS" "$DURATION" -H "Cookie: $session" "$url/"
    report "member, / (round $round)"
    usage_report
    member=$(awk -v a="$member" -v b="$(rate)" 'BEGIN { print a + b }')
    before=$(renders)
    usage_start
    run "$CONNECTIONS" "$DURATION" "$url/uncached"
    report "anonymous, /uncached (round $round)"
    usage_report
    echo "  renders during the anonymous run: $(($(renders) - before)) of $(awk '/requests in/ {print $1}' "$work/out.txt") requests"
    anonymous=$(awk -v a="$anonymous" -v b="$(rate)" 'BEGIN { print a + b }')
done
awk -v m="$member" -v a="$anonymous" 'BEGIN { printf "ratio member / anonymous uncached: %.3f (goal >= 0.9)\n", m / a }'

echo "== 2. cached front page (wrk -t1 -c$CACHED_CONNECTIONS -d${DURATION}s, ${CACHED_PAUSE} ms pause per answer), quiet and during a logon storm (wrk -t1 -c$STORM_CONNECTIONS, $STORM_ACCOUNTS accounts)"
ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) v = v / 1000; else if (v ~ /ms$/) v = v + 0; else if (v ~ /s$/) v = v * 1000; print v }'; }
cached() { run "$CACHED_CONNECTIONS" "$1" -s bench/paced.lua "$url/" -- "$CACHED_PAUSE"; }
cached 2
quiet=0 stormy=0
for round in 1 2; do
    usage_start
    cached "$DURATION"
    report "cached /, quiet (round $round)"
    usage_report
    quiet=$(awk -v a="$quiet" -v b="$(ms "$(p99 "$work/out.txt")")" 'BEGIN { print a + b }')

    wrk -t1 -c"$STORM_CONNECTIONS" -d"$((DURATION + 2))s" --latency -s bench/sessions-storm.lua "$url/" -- "$STORM_ACCOUNTS" \
        >"$work/storm.txt" &
    STORM_PID=$!
    sleep 1
    usage_start "$STORM_PID"
    cached "$DURATION"
    report "cached /, during the storm (round $round)"
    usage_report "$STORM_PID"
    stormy=$(awk -v a="$stormy" -v b="$(ms "$(p99 "$work/out.txt")")" 'BEGIN { print a + b }')
    wait "$STORM_PID"
    echo "  storm: $(awk '/requests in/ {print $1}' "$work/storm.txt") logon requests in $((DURATION + 2)) s, p50 $(awk '/ 50%/ {print $2}' "$work/storm.txt"), p99 $(p99 "$work/storm.txt")"
    grep '^logons:' "$work/storm.txt" | sed 's/^/  /'
done
awk -v q="$quiet" -v s="$stormy" 'BEGIN { printf "ratio cached p99 storm / quiet: %.2f (sums of both rounds %.2f ms / %.2f ms; goal <= 2)\n", s / q, s, q }'
echo "(dist build; server RSS $(($(awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status") / 1024)) MiB; $(nproc) cores shared by server and load generators)"
