#!/usr/bin/env bash
# Files from a site's files/ folder: Bulwark's `file` controller against nginx
# (2 workers, sendfile on) serving the very same files, in the same run, on
# loopback. A 20 KB file (held in memory by Bulwark) and a 1 MB file (held too
# with the default --file-memory of 128 MiB: a thirty-second is 4 MiB); prints
# requests/s, p99 and the Bulwark/nginx ratio of each round, and the median
# ratio. Bounded by DURATION and ROUNDS.
#
#   bench/files.sh                      # 3 rounds of 6 s per file and server, 100 connections
#   DURATION=20 CONNECTIONS=256 bench/files.sh
#   ACCESS_LOG=on bench/files.sh        # both servers write an access log file
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-6}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-100}
BULWARK_PORT=${BULWARK_PORT:-8110}
NGINX_PORT=${NGINX_PORT:-8111}

# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
need nginx nginx-light

# A site of nothing but files/: incompressible bytes, like the photos and
# documents uploads are.
mkdir -p "$work/sites/files/files"
cat >"$work/sites/files/site.toml" <<'TOML'
hostname = "files.localhost"
default = true
TOML
head -c 20480 /dev/urandom >"$work/sites/files/files/20k.jpg"
head -c 1048576 /dev/urandom >"$work/sites/files/files/1m.jpg"
chmod -R a+rX "$work/sites"

bulwark_log=off
if [ "${ACCESS_LOG:-off}" = on ]; then
    bulwark_log="$work/bulwark-access.log"
    export NGINX_ACCESS_LOG="$work/nginx-access.log"
fi
BULWARK_BIN=${BULWARK_BIN:-target/dist/bulwark}
[ "$BULWARK_BIN" != target/dist/bulwark ] || cargo build --profile dist -q -p bulwark
"$BULWARK_BIN" serve --sites "$work/sites" --listen "127.0.0.1:$BULWARK_PORT" \
    --access-log "$bulwark_log" >"$work/bulwark.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$BULWARK_PORT/files/20k.jpg" >/dev/null && break; sleep 0.1; done

start_nginx "$NGINX_PORT" "
        location /files/ { root $work/sites/files; sendfile on; tcp_nopush on; }"

for f in 20k.jpg 1m.jpg; do
    cmp <(curl -s "http://127.0.0.1:$BULWARK_PORT/files/$f") "$work/sites/files/files/$f"
    cmp <(curl -s "http://127.0.0.1:$NGINX_PORT/files/$f") "$work/sites/files/files/$f"
done

rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
lat() { awk '/ 99%/ {print $2}' "$1"; }
run() { wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$1" >"$2"; }

# Rounds alternate the two servers, so a slow moment of the machine falls on
# both; the ratio reported is the median of the rounds'.
echo "file     round  bulwark_req/s  nginx_req/s  ratio  bulwark_p99  nginx_p99"
for f in 20k.jpg 1m.jpg; do
    ratios=()
    for round in $(seq "$ROUNDS"); do
        run "http://127.0.0.1:$BULWARK_PORT/files/$f" "$work/b-$f.txt"
        run "http://127.0.0.1:$NGINX_PORT/files/$f" "$work/n-$f.txt"
        b=$(rate "$work/b-$f.txt"); n=$(rate "$work/n-$f.txt")
        ratio=$(awk -v b="$b" -v n="$n" 'BEGIN {printf "%.2f", b / n}')
        ratios+=("$ratio")
        printf '%-7s  %5s  %13s  %11s  %5s  %11s  %9s\n' "$f" "$round" "$b" "$n" "$ratio" "$(lat "$work/b-$f.txt")" "$(lat "$work/n-$f.txt")"
        for side in b n; do
            grep "Non-2xx\|Socket errors" "$work/$side-$f.txt" | sed "s|^|  $side $f: |" || true
        done
    done
    printf '%-7s  median ratio %s\n' "$f" "$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
echo "(wrk -t1 -c$CONNECTIONS -d${DURATION}s; bulwark RSS: $(ps -o rss= -p $SERVER_PID) KiB)"
