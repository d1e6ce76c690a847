#!/usr/bin/env bash
# A change against its base, side by side in one sitting: two binaries of the
# dist profile (Cargo.toml; every benchmark figure is taken on it)
# serve the same sites and are measured in turn, alternating which goes first,
# over several rounds. Prints each scenario's median requests/s for both, the
# ratio (new / base) and each binary's spread over the rounds ((max - min) /
# median): a drop larger than the spread is a regression.
#
#   bench/ab.sh [BASE_COMMIT]          # default: HEAD~1, against the work tree
#   ROUNDS=3 DURATION=6 CONNECTIONS=50 bench/ab.sh b9490a8
#   BASE_BIN=... NEW_BIN=... bench/ab.sh   # two binaries built already
#   ACCESS_LOG=on bench/ab.sh             # both servers write an access log file
#   BASE_BIN=B NEW_BIN=B NEW_REDIRECTS=1000 bench/ab.sh   # one binary, 1,000 redirect rules against none
#   SAME_STARTER=1 bench/ab.sh 8e2ef6c     # both serve the base's starter site: the engines alone
#
# Scenarios: /json and /random (templates, no cache) and /cached (page cache)
# of bench/sites; the starter site's front page from the page cache
# (anonymous) and rendered per request (logged on); a 20 KB file from its
# files/; a demo article's page (the `page` controller), cached and rendered. wrk -t2, loopback only, every run bounded by DURATION.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6}
WARMUP=${WARMUP:-2}
CONNECTIONS=${CONNECTIONS:-50}
PORT=${PORT:-8600}

# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk

base_commit=${1:-HEAD~1}
if [ -z "${BASE_BIN:-}" ]; then
    tree="$work/base-tree"
    git worktree add -q --detach "$tree" "$base_commit"
    # The dist profile where the base has one; before it, release was built
    # the same way (thin LTO, 4 codegen units).
    profile=release
    grep -q '^\[profile\.dist\]' "$tree/Cargo.toml" && profile=dist
    (cd "$tree" && CARGO_TARGET_DIR="${BASE_TARGET:-$PWD/target-base}" cargo build --profile "$profile" -q -p bulwark)
    BASE_BIN="${BASE_TARGET:-$tree/target-base}/$profile/bulwark"
    cp "$BASE_BIN" "$work/bulwark-base"
    git worktree remove --force "$tree"
    BASE_BIN="$work/bulwark-base"
fi
if [ -z "${NEW_BIN:-}" ]; then
    cargo build --profile dist -q -p bulwark
    NEW_BIN=target/dist/bulwark
fi
BASE_BIN=$(readlink -f "$BASE_BIN")
NEW_BIN=$(readlink -f "$NEW_BIN")

# One folder per binary: the starter site (written by the first start) and
# the benchmark site next to it, with a 20 KB file to serve.
password="ab-$(date +%s%N)"
prepare() {
    local dir="$work/$1"
    mkdir -p "$dir/sites"
    start "$1" "$2"
    stop
    cp -r bench/sites/bench "$dir/sites/bench"
    sed -i '/^default *=/d' "$dir/sites/bench/site.toml"
    mkdir -p "$dir/sites/default/files"
    head -c 20480 /dev/urandom >"$dir/sites/default/files/20k.bin"
}
access_log() {
    if [ "${ACCESS_LOG:-off}" = on ]; then echo "$work/$1-access.log"; else echo off; fi
}
start() {
    (cd "$work/$1" && BULWARK_ADMIN_PASSWORD="$password" BULWARK_LOG=warn \
        exec "$2" serve --listen "127.0.0.1:$PORT" --access-log "$(access_log "$1")") >"$work/$1.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/" && return; sleep 0.1; done
    echo "the $1 server did not start:" >&2
    cat "$work/$1.log" >&2
    exit 1
}
stop() {
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

url="http://127.0.0.1:$PORT"
# SCENARIOS="page-cached page-rendered" bench/ab.sh ... measures only those.
read -r -a scenarios <<<"${SCENARIOS:-json random cached front-cached front-rendered file-20k page-cached page-rendered}"
measure() {
    local name=$1 round=$2 cookie page
    cookie=$(logon_cookie "$url" "$password")
    [ -n "$cookie" ] || { echo "logon failed ($name)" >&2; exit 1; }
    # A resource's page (`page` controller): the newest demo article's own URL
    # (`/en/page/...` on a starter with language URLs).
    page=$(curl -sf "$url/articles" | grep -o 'href="[^"]*/page/[^"]*"' | head -1 | cut -d'"' -f2)
    # The front page: `/`, or where it sends a visitor (`/en/`).
    front=$(curl -s -o /dev/null -w '%{redirect_url}' "$url/")
    front=${front:-$url/}
    [ -n "$page" ] || { echo "no article page found ($name)" >&2; exit 1; }
    for scenario in "${scenarios[@]}"; do
        local args=()
        case $scenario in
            json) args=(-H "Host: bench.localhost" "$url/json") ;;
            random) args=(-H "Host: bench.localhost" "$url/random") ;;
            cached) args=(-H "Host: bench.localhost" "$url/cached") ;;
            front-cached) args=("$front") ;;
            front-rendered) args=(-H "Cookie: $cookie" "$front") ;;
            file-20k) args=("$url/files/20k.bin") ;;
            page-cached) args=("$url$page") ;;
            page-rendered) args=(-H "Cookie: $cookie" "$url$page") ;;
        esac
        wrk -t2 -c"$CONNECTIONS" -d"${WARMUP}s" "${args[@]}" >/dev/null
        wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "${args[@]}" |
            awk -v s="$scenario" -v n="$name" -v r="$round" '/Requests\/sec/ {print s, n, r, $2}' \
            >>"$work/rates"
    done
}

# NEW_REDIRECTS=1000: the new side's site gets that many redirect rules (the
# redirects module), to show what they cost requests that find their page.
with_redirects() {
    local dir="$work/$1" n=$2 token csv
    token=$(sed -n 's/^token = "\(.*\)"/\1/p' "$dir/sites/default/site.toml" | head -1)
    [ -n "$token" ] || { echo "no [api] token in $dir's starter site" >&2; exit 1; }
    csv=$(python3 -c "import json,sys; print(json.dumps({'csv': ''.join(f'/old/{i}/page,/page/{i},301\\n' for i in range($n))}))")
    start "$1" "$3"
    curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d "$csv" "$url/api/redirects/import" >/dev/null ||
        { echo "importing $n redirects failed" >&2; exit 1; }
    stop
}

prepare base "$BASE_BIN"
prepare new "$NEW_BIN"
# SAME_STARTER=1: the new binary serves the base's starter site (its
# templates and data, migrated forward at start), so the starter's scenarios
# compare the engines alone rather than the starters' own work.
if [ "${SAME_STARTER:-}" = 1 ]; then
    rm -rf "$work/new/sites/default"
    cp -r "$work/base/sites/default" "$work/new/sites/default"
fi
if [ -n "${NEW_REDIRECTS:-}" ]; then with_redirects new "$NEW_REDIRECTS" "$NEW_BIN"; fi
for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then order="base new"; else order="new base"; fi
    for name in $order; do
        bin=$BASE_BIN
        [ "$name" = new ] && bin=$NEW_BIN
        start "$name" "$bin"
        measure "$name" "$round"
        stop
    done
    echo "round $round of $ROUNDS done" >&2
done

echo "base: $base_commit ($BASE_BIN)"
echo "new:  work tree ($NEW_BIN)"
echo "wrk -t2 -c$CONNECTIONS -d${DURATION}s after ${WARMUP}s warm-up, $ROUNDS rounds alternated"
python3 - "$work/rates" "${scenarios[@]}" <<'PY'
import statistics, sys
rates = {}
for line in open(sys.argv[1]):
    s, n, r, v = line.split()
    rates.setdefault((s, n), []).append(float(v))
# The machine's speed drifts during a sitting: each round's new / base (the
# two measured one after the other) says more than the medians' ratio.
print("| scenario | base req/s (median) | spread | new req/s (median) | spread | new / base | per round |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for s in sys.argv[2:]:
    b, n = rates[(s, "base")], rates[(s, "new")]
    mb, mn = statistics.median(b), statistics.median(n)
    sb, sn = (max(b) - min(b)) / mb, (max(n) - min(n)) / mn
    paired = [y / x for x, y in zip(b, n)]
    rounds = " ".join(f"{r:.2f}" for r in paired)
    print(f"| {s} | {mb:,.0f} | {sb:.1%} | {mn:,.0f} | {sn:.1%} | {mn / mb:.3f} | {rounds} (median {statistics.median(paired):.3f}) |")
PY
