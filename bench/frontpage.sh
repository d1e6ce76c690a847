#!/usr/bin/env bash
# The starter site's front page (latest articles from the store, through a layout):
#   - uncached: any session cookie bypasses the page cache, so every request
#     renders the template and reads the models (the cookie here names no live
#     session, so the render is anonymous; bench/sessions.sh measures a real
#     logged-in member against the anonymous uncached page),
#   - cached, as anonymous visitors get it,
# against nginx serving the same bytes from a file in the same run.
# Loopback only, bounded in time. Usage: DURATION=10 CONNECTIONS=100 bench/frontpage.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-100}
PORT=${PORT:-8500}
NGINX_PORT=${NGINX_PORT:-8501}
# shellcheck source=bench/lib.sh
source bench/lib.sh
need wrk wrk
need nginx nginx-light
cargo build --profile dist -q -p bulwark
(cd "$work" && exec "$OLDPWD/target/dist/bulwark" serve --listen "127.0.0.1:$PORT" --access-log off) \
    >"$work/server.log" 2>&1 &
SERVER_PID=$!
url="http://127.0.0.1:$PORT"
for _ in $(seq 200); do curl -sf "$url/" >/dev/null && break; sleep 0.1; done
token=$(sed -n 's/^token = "\(.*\)"/\1/p' "$work/sites/default/site.toml")
renders() { curl -s -H "Authorization: Bearer $token" "$url/api/stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['renders'])"; }

mkdir -p "$work/static"
curl -s "$url/" >"$work/static/index.html"
start_nginx "$NGINX_PORT" "location / { default_type text/html; root $work/static; index index.html; }"

run() { wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" >"$work/out.txt"; }
report() {
    local rate p50 p99 errors
    rate=$(awk '/Requests\/sec/ {print $2}' "$work/out.txt")
    p50=$(awk '/ 50%/ {print $2}' "$work/out.txt")
    p99=$(awk '/ 99%/ {print $2}' "$work/out.txt")
    errors=$(grep -E "Non-2xx|Socket errors" "$work/out.txt" | tr -s ' ' | paste -sd ';' || true)
    printf '%-34s %10s req/s  p50 %8s  p99 %8s  %s\n' "$1" "$rate" "$p50" "$p99" "${errors:-no errors}"
    echo "$rate" >"$work/rate-$2"
}

before=$(renders)
run -H "Cookie: bulwark_session=bench" "$url/"
report "front page, uncached (session)" uncached
echo "  renders during the run: $(($(renders) - before))"
run "$url/"
report "front page, cached (anonymous)" cached
run "http://127.0.0.1:$NGINX_PORT/"
report "nginx, same bytes from a file" nginx
awk -v c="$(cat "$work/rate-cached")" -v u="$(cat "$work/rate-uncached")" -v n="$(cat "$work/rate-nginx")" \
    'BEGIN { printf "ratios: cached/nginx %.2f, uncached/nginx %.2f, cached/uncached %.1f\n", c / n, u / n, c / u }'
echo "(wrk -t1 -c$CONNECTIONS -d${DURATION}s; page $(wc -c <"$work/static/index.html") bytes; server RSS $(($(awk '/VmRSS/ {print $2}' /proc/$SERVER_PID/status) / 1024)) MiB)"
