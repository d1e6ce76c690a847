#!/usr/bin/env bash
# Combined /lib/ URLs under attack: clients asking for combinations of 64 files that
# nobody asked for before, each a new build (read, gzip and brotli at their best).
# Reports the server's peak memory against its memory at rest (same run), what share
# of the requests were refused with 503, and a cached page's p99 during the storm
# against the same page at rest. Loopback only; bounded by DURATION.
#
#   bench/lib-combos.sh                  # 8 and then 32 clients, 10 s each
#   DURATION=20 bench/lib-combos.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8600}
DURATION=${DURATION:-10}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

work=$(mktemp -d)
trap 'kill ${SERVER:-} 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/sites/combo/templates" "$work/sites/combo/lib/js"
cat >"$work/sites/combo/site.toml" <<'TOML'
hostname = "combo.test"
default = true

[[dispatch]]
name = "home"
path = "/"
controller = "template"
template = "home.tpl"
TOML
echo "cached home" >"$work/sites/combo/templates/home.tpl"
# 64 files of about 20 KB of script-like text each.
python3 - "$work/sites/combo/lib/js" <<'PY'
import random, sys
words = ["function ", "var ", "return ", "{", "}", "(x)", ";\n", "if (a) ", "else "]
for i in range(64):
    r = random.Random(i)
    text = "".join(r.choice(words) + str(r.randrange(1000)) for _ in range(2500))
    open(f"{sys.argv[1]}/f{i}.js", "w").write(text)
PY

cargo build --profile dist -q -p bulwark
target/dist/bulwark serve --sites "$work/sites" --listen "127.0.0.1:$PORT" --access-log off \
    >"$work/bulwark.log" 2>&1 &
SERVER=$!
url="http://127.0.0.1:$PORT"
for _ in $(seq 100); do curl -sf "$url/" >/dev/null && break; sleep 0.1; done
kib() { awk -v k="$1" '$1 == k":" {print $2}' /proc/$SERVER/status; }
p99() { awk '/ 99%/ {print $2}' "$1"; }

wrk -t1 -c4 -d3s --latency "$url/" >"$work/quiet.txt"
rest=$(kib VmRSS)
echo "at rest: RSS $((rest / 1024)) MiB, cached page p99 $(p99 "$work/quiet.txt")"

storm() {
    python3 - "$url" "$1" "$DURATION" <<'PY'
import http.client, random, sys, threading, time, urllib.parse
url, clients, duration = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
host = urllib.parse.urlparse(url)
counts = {}
lock = threading.Lock()
def client(seed):
    r = random.Random(seed)
    end = time.time() + duration
    while time.time() < end:
        files = list(range(64))
        r.shuffle(files)
        path = "/lib/js/" + "~".join(f"f{i}" for i in files) + "~1.js"
        c = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
        try:
            c.request("GET", path, headers={"Accept-Encoding": "br"})
            status = c.getresponse().status
        except Exception:
            status = "error"
        finally:
            c.close()
        with lock:
            counts[status] = counts.get(status, 0) + 1
threads = [threading.Thread(target=client, args=(s,)) for s in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
print(" ".join(f"{k}:{v}" for k, v in sorted(counts.items(), key=str)))
PY
}

for clients in 8 32; do
    storm "$clients" >"$work/storm.txt" &
    STORM=$!
    sleep 1
    wrk -t1 -c4 -d"$((DURATION - 2))s" --latency "$url/" >"$work/busy.txt"
    wait $STORM
    peak=$(kib VmHWM)
    echo "$clients clients, ${DURATION}s of new 64-file combinations: answers $(cat "$work/storm.txt")"
    echo "  peak RSS $((peak / 1024)) MiB = $(awk -v p="$peak" -v r="$rest" 'BEGIN {printf "%.1f", p / r}')x at rest;" \
        "cached page p99 $(p99 "$work/busy.txt") (at rest $(p99 "$work/quiet.txt"))"
done
