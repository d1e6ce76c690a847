#!/usr/bin/env bash
# Seed 001's load test as the seed ran it: httperf opening one new connection
# per request, the offered rate ramped from 1,000 up, against seed 001's page
# (a list of random length through a template, bench/sites' /random) and, in
# the same run, nginx with one worker serving a body of the same size. Each
# step runs both servers in turn (alternating which goes first) and prints the
# replies/s each kept up with and its errors; a server keeps up at a step when
# its 2xx replies reach 99% of the offered rate with no error. Writes the
# curves as a table and as a PNG plot (gnuplot).
#
#   bench/ramp.sh                               # 1,000 to 30,000 by 1,000, 4 s a step
#   START=2000 STEP=2000 MAX=40000 SECONDS_PER_STEP=5 bench/ramp.sh
#   BULWARK_BIN=/path/to/bulwark OUT=bench/ramp.png bench/ramp.sh
#
# The ramp stops two steps after both servers have stopped keeping up. One new
# connection per request leaves a socket in TIME-WAIT per request, and httperf
# spins once its client ports run into them: for the run only, the local port
# range is widened, tcp_tw_reuse set and tcp_max_tw_buckets kept small (the
# old values are put back on exit). Loopback only, bounded by MAX.
set -euo pipefail
cd "$(dirname "$0")/.."
START=${START:-1000}
STEP=${STEP:-1000}
MAX=${MAX:-30000}
SECONDS_PER_STEP=${SECONDS_PER_STEP:-4}
OUT=${OUT:-bench/ramp.png}
BULWARK_PORT=${BULWARK_PORT:-8120}
NGINX_PORT=${NGINX_PORT:-8121}

# shellcheck source=bench/lib.sh
source bench/lib.sh
need httperf httperf
need nginx nginx-light
need gnuplot gnuplot-nox

# The kernel's settings for many short connections, for this run only.
settings=(net.ipv4.ip_local_port_range net.ipv4.tcp_tw_reuse net.ipv4.tcp_max_tw_buckets net.core.somaxconn)
saved=()
for key in "${settings[@]}"; do saved+=("$(sysctl -n "$key")"); done
restore_settings() {
    for i in "${!settings[@]}"; do sysctl -q -w "${settings[$i]}=${saved[$i]}" || true; done
    bench_cleanup
}
trap restore_settings EXIT
sysctl -q -w net.ipv4.ip_local_port_range="1024 65535"
sysctl -q -w net.ipv4.tcp_tw_reuse=1
sysctl -q -w net.ipv4.tcp_max_tw_buckets=4096
sysctl -q -w net.core.somaxconn=65535
ulimit -n "$(ulimit -Hn)"

BULWARK_BIN=${BULWARK_BIN:-target/dist/bulwark}
[ "$BULWARK_BIN" != target/dist/bulwark ] || cargo build --profile dist -q -p bulwark
"$BULWARK_BIN" serve --sites bench/sites --listen "127.0.0.1:$BULWARK_PORT" \
    --access-log off >"$work/bulwark.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$BULWARK_PORT/random" >/dev/null && break; sleep 0.1; done

# The page varies in length (1-20 items); nginx returns one of median size.
random_body=$(for _ in $(seq 200); do curl -s "http://127.0.0.1:$BULWARK_PORT/random" | wc -c; done | sort -n | sed -n 100p)
random_fixed=$(head -c "$random_body" /dev/zero | tr '\0' 'x')
NGINX_WORKERS=1 NGINX_CONNECTIONS=65535 start_nginx "$NGINX_PORT" "
        location = /random { default_type text/html; return 200 '$random_fixed'; }"

# run PORT RATE: one httperf step; prints "replies_2xx_per_s errors".
run() {
    local out
    out=$(httperf --hog --server 127.0.0.1 --port "$1" --uri /random \
        --rate "$2" --num-conns $(($2 * SECONDS_PER_STEP)) --num-calls 1 --timeout 5 2>&1)
    echo "$out" >>"$work/httperf.log"
    echo "$out" | awk '
        /^Total: / { for (i = 1; i <= NF; i++) if ($i == "test-duration") duration = $(i + 1) }
        /^Reply status: / { split($4, ok, "="); replies = ok[2] }
        /^Errors: total / { errors = $3 }
        END { printf "%.0f %d\n", (duration > 0 ? replies / duration : 0), errors }'
}
keeps_up() { awk -v got="$1" -v errors="$2" -v rate="$3" 'BEGIN { exit !(errors == 0 && got >= 0.99 * rate) }'; }

echo "offered  bulwark_replies/s  errors  nginx_replies/s  errors"
table="$work/ramp.dat"
: >"$table"
behind=0
first=bulwark
for rate in $(seq "$START" "$STEP" "$MAX"); do
    for side in $first $([ $first = bulwark ] && echo nginx || echo bulwark); do
        port=$BULWARK_PORT; [ "$side" = nginx ] && port=$NGINX_PORT
        read -r got errors < <(run "$port" "$rate")
        eval "${side}_got=$got ${side}_errors=$errors"
    done
    first=$([ $first = bulwark ] && echo nginx || echo bulwark)
    # shellcheck disable=SC2154 # set by the eval above
    printf '%7s  %17s  %6s  %15s  %6s\n' "$rate" "$bulwark_got" "$bulwark_errors" "$nginx_got" "$nginx_errors"
    echo "$rate $bulwark_got $bulwark_errors $nginx_got $nginx_errors" >>"$table"
    if keeps_up "$bulwark_got" "$bulwark_errors" "$rate" || keeps_up "$nginx_got" "$nginx_errors" "$rate"; then
        behind=0
    else
        behind=$((behind + 1))
        [ "$behind" -lt 3 ] || break
    fi
done

# The highest offered rate each kept up with, and every rate below it too.
last_kept() {
    awk -v got="$1" -v errors="$2" '
        { if ($errors == 0 && $got >= 0.99 * $1 && !broken) best = $1; else broken = 1 }
        END { print best + 0 }' "$table"
}
echo "kept up (2xx replies >= 99% of offered, no errors) up to: bulwark $(last_kept 2 3)/s, nginx (1 worker) $(last_kept 4 5)/s"
echo "(httperf --hog --num-calls 1 --timeout 5, ${SECONDS_PER_STEP} s a step; page body $random_body bytes)"

gnuplot <<GNUPLOT
set terminal png size 900,540
set output "$OUT"
set title "One new connection per request (httperf), seed 001's page: replies against offered rate"
set xlabel "offered rate (connections/s)"
set ylabel "2xx replies/s"
set key left top
set grid
plot "$table" using 1:1 with lines dashtype 2 lc rgb "#999999" title "offered", \
     "$table" using 1:2 with linespoints lw 2 lc rgb "#1f6feb" title "Bulwark", \
     "$table" using 1:4 with linespoints lw 2 lc rgb "#d1242f" title "nginx, 1 worker"
GNUPLOT
echo "plot: $OUT"
