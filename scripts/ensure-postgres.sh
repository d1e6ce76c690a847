#!/usr/bin/env bash
# Make a PostgreSQL server available to the test suite and export
# BULWARK_TEST_PG_URL. Meant to be *sourced* by the project's test script:
#
#     source scripts/ensure-postgres.sh
#
# - If 127.0.0.1:5432 answers, use it (database `test`, user `postgres`,
#   unless BULWARK_TEST_PG_URL is already set).
# - Otherwise (or with BULWARK_PG_FORCE_THROWAWAY=1): install Debian's
#   `postgresql` package if missing, initdb a throwaway cluster in a temp dir,
#   start it on a free port on 127.0.0.1 with trust auth, create database
#   `test`, export its URL, and register `bulwark_pg_cleanup` (also run on
#   EXIT) to stop it and remove the directory.
#
# Idempotent: sourcing it twice reuses the running throwaway cluster.

_bulwark_pg_log() { echo "ensure-postgres: $*" >&2; }

_bulwark_pg_bindir() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return 0; }
    done
    command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
    return 1
}

_bulwark_pg_free_port() {
    python3 - <<'PY' 2>/dev/null || echo $(( 20000 + RANDOM % 20000 ))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

bulwark_pg_cleanup() {
    if [ -n "${BULWARK_PG_THROWAWAY_DIR:-}" ] && [ -d "$BULWARK_PG_THROWAWAY_DIR" ]; then
        local bindir
        bindir="$(_bulwark_pg_bindir)"
        if [ "$(id -u)" = 0 ]; then
            su postgres -s /bin/sh -c "'$bindir/pg_ctl' -D '$BULWARK_PG_THROWAWAY_DIR/data' -m immediate stop" >/dev/null 2>&1 || true
        else
            "$bindir/pg_ctl" -D "$BULWARK_PG_THROWAWAY_DIR/data" -m immediate stop >/dev/null 2>&1 || true
        fi
        rm -rf "$BULWARK_PG_THROWAWAY_DIR"
        _bulwark_pg_log "stopped and removed the throwaway cluster"
    fi
    unset BULWARK_PG_THROWAWAY_DIR
}

_bulwark_pg_throwaway() {
    # Already running from an earlier `source` in this shell?
    if [ -n "${BULWARK_PG_THROWAWAY_DIR:-}" ] && [ -n "${BULWARK_PG_THROWAWAY_PORT:-}" ] \
        && pg_isready -q -h 127.0.0.1 -p "$BULWARK_PG_THROWAWAY_PORT" 2>/dev/null; then
        export BULWARK_TEST_PG_URL="postgres://postgres@127.0.0.1:$BULWARK_PG_THROWAWAY_PORT/test"
        return 0
    fi
    local bindir
    if ! bindir="$(_bulwark_pg_bindir)"; then
        _bulwark_pg_log "installing Debian's postgresql package"
        if [ "$(id -u)" = 0 ]; then
            DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || return 1
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 || return 1
        else
            sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || return 1
            sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 || return 1
        fi
        bindir="$(_bulwark_pg_bindir)" || { _bulwark_pg_log "initdb not found after install"; return 1; }
    fi
    local dir port run
    dir="$(mktemp -d /tmp/bulwark-pg.XXXXXX)"
    port="$(_bulwark_pg_free_port)"
    chmod 755 "$dir"
    if [ "$(id -u)" = 0 ]; then
        # initdb refuses to run as root.
        id postgres >/dev/null 2>&1 || useradd --system --home-dir "$dir" --shell /bin/sh postgres
        chown postgres: "$dir"
        run() { su postgres -s /bin/sh -c "$*"; }
    else
        run() { sh -c "$*"; }
    fi
    if ! run "'$bindir/initdb' -D '$dir/data' -U postgres --auth=trust -E UTF8 --locale=C.UTF-8" >"$dir/initdb.log" 2>&1; then
        _bulwark_pg_log "initdb failed:"; cat "$dir/initdb.log" >&2; rm -rf "$dir"; return 1
    fi
    if ! run "'$bindir/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 \
            -o \"-c listen_addresses=127.0.0.1 -p $port -k '$dir' -c fsync=on\" start" >/dev/null 2>&1; then
        _bulwark_pg_log "server did not start:"; cat "$dir/server.log" >&2; rm -rf "$dir"; return 1
    fi
    export BULWARK_PG_THROWAWAY_DIR="$dir"
    export BULWARK_PG_THROWAWAY_PORT="$port"
    trap bulwark_pg_cleanup EXIT
    if ! run "'$bindir/createdb' -h 127.0.0.1 -p $port -U postgres test"; then
        _bulwark_pg_log "createdb failed"; bulwark_pg_cleanup; return 1
    fi
    export BULWARK_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/test"
    _bulwark_pg_log "throwaway cluster at $BULWARK_TEST_PG_URL ($dir)"
}

bulwark_ensure_postgres() {
    if [ "${BULWARK_PG_FORCE_THROWAWAY:-0}" != 1 ] && command -v pg_isready >/dev/null 2>&1 \
        && pg_isready -q -h 127.0.0.1 -p 5432; then
        export BULWARK_TEST_PG_URL="${BULWARK_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/test}"
        _bulwark_pg_log "using the server at 127.0.0.1:5432"
        return 0
    fi
    _bulwark_pg_throwaway
}

bulwark_ensure_postgres
