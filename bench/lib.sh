# Shared by the benchmark scripts (sourced, not run): tools, a work folder, nginx.

# need COMMAND PACKAGE: install the Debian package when the command is missing.
need() { command -v "$1" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }; }

# A work folder that nginx's workers (user nobody) can read; on exit the servers
# started from the script ($SERVER_PID, nginx) stop and the folder goes.
work=$(mktemp -d)
chmod 755 "$work"
bench_cleanup() {
    [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null || true
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap bench_cleanup EXIT

# start_nginx PORT LOCATIONS: nginx with 2 workers (the machine's cores; or
# NGINX_WORKERS) on
# 127.0.0.1:PORT, with the given location blocks; no access log unless
# NGINX_ACCESS_LOG names a file.
start_nginx() {
    cat >"$work/nginx.conf" <<NGINX
worker_processes ${NGINX_WORKERS:-2};
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections ${NGINX_CONNECTIONS:-4096}; }
http {
    access_log ${NGINX_ACCESS_LOG:-off};
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$1;
        $2
    }
}
NGINX
    nginx -c "$work/nginx.conf" -p "$work"
    sleep 0.5
}

# logon_cookie URL PASSWORD [CURL_ARGS...]: logs the admin on at URL (the
# site's root) and prints the session cookie (`bulwark_session=...`), empty
# when the logon failed.
logon_cookie() {
    curl -sf -c - "${@:3}" -H 'Content-Type: application/json' \
        -d "{\"username\": \"admin\", \"password\": \"$2\"}" "$1/api/auth/logon" |
        awk '/bulwark_session/ {print $6 "=" $7}'
}

# start_bench_bulwark PORT: $BULWARK_BIN (built from this tree when unset)
# serving bench/sites on 127.0.0.1:PORT without an access log, with as many
# descriptors as allowed; sets SERVER_PID and returns once /json answers.
start_bench_bulwark() {
    BULWARK_BIN=${BULWARK_BIN:-target/dist/bulwark}
    [ "$BULWARK_BIN" != target/dist/bulwark ] || cargo build --profile dist -q -p bulwark
    ulimit -n "$(ulimit -Hn)"
    "$BULWARK_BIN" serve --sites bench/sites --listen "127.0.0.1:$1" \
        --access-log off >"$work/bulwark.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/json" >/dev/null && break; sleep 0.1; done
}
