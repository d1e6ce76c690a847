#!/usr/bin/env bash
# Lighthouse (npm `lighthouse`, pinned, with the system Chromium) on the
# starter site's front page and an article with a picture in its text and a
# featured picture, as a phone on a slow connection sees them (Lighthouse's
# default mobile emulation and simulated throttling). Prints each page's four
# scores and every audit that cost points, and fails when a page is below
# the goals: performance >= 95; accessibility, best practices and SEO 100.
#
#   bench/lighthouse.sh                       # the dist build (built when missing)
#   BULWARK_BIN=target/debug/bulwark bench/lighthouse.sh
#
# Loopback only; one run per page (Lighthouse's scores for a page served
# from loopback vary by a point or two between runs: ROUNDS=3 takes the
# median of three).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8600}
ROUNDS=${ROUNDS:-1}
LIGHTHOUSE_VERSION=12.8.2
# shellcheck source=bench/lib.sh
source bench/lib.sh
./scripts/ensure-browser.sh >/dev/null

# Lighthouse in a folder of its own (not the project's node_modules).
tools="${BULWARK_TOOLS_DIR:-$HOME/.cache/bulwark-tools}/lighthouse-$LIGHTHOUSE_VERSION"
if [ ! -x "$tools/node_modules/.bin/lighthouse" ]; then
    mkdir -p "$tools"
    (cd "$tools" && npm install --silent --no-audit --no-fund "lighthouse@$LIGHTHOUSE_VERSION" >/dev/null)
fi

BULWARK_BIN=${BULWARK_BIN:-target/dist/bulwark}
[ "$BULWARK_BIN" != target/dist/bulwark ] || cargo build --profile dist -q -p bulwark
bin="$(cd "$(dirname "$BULWARK_BIN")" && pwd)/$(basename "$BULWARK_BIN")"
password="lighthouse-$(date +%s%N)"
(cd "$work" && BULWARK_ADMIN_PASSWORD="$password" BULWARK_LOG=warn \
    exec "$bin" serve --listen "127.0.0.1:$PORT" --access-log off) >"$work/server.log" 2>&1 &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null; rm -rf "$work"' EXIT
url="http://127.0.0.1:$PORT"
for _ in $(seq 300); do curl -sf -o /dev/null "$url/en/" && break; sleep 0.1; done
token=$(sed -n 's/^token = "\(.*\)"/\1/p' "$work/sites/default/site.toml")

# An article as an editor makes one: a featured picture, and a picture in
# its text as the editor inserts it (a figure with the medium preview).
article=$(python3 - "$url" "$token" <<'EOF'
import io, json, struct, sys, urllib.request, zlib
url, token = sys.argv[1], sys.argv[2]
def call(method, path, body=None, ctype="application/json"):
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method,
        headers={"Authorization": "Bearer " + token, "Content-Type": ctype})
    return json.load(urllib.request.urlopen(req))
def png(w, h):
    # A gradient, so the encoders have something to do.
    rows = b"".join(b"\0" + b"".join(bytes((x * 255 // w, y * 255 // h, 160)) for x in range(w)) for y in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
def upload(name, data):
    boundary = "lighthouse-boundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: image/png\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return call("POST", "/media/upload", body, "multipart/form-data; boundary=" + boundary)
featured = upload("harbour.png", png(1600, 1000))
inline = upload("market.png", png(1200, 900))
for p in (featured, inline):
    call("PATCH", f"/api/rsc/{p['id']}", {"published": True, "props": {"alt": "A gradient from blue to pink"}})
body = ("<p>The boats came in early and the market opened at six.</p>"
        f'<figure class="picture align-right size-small"><img src="/media/preview/{inline["id"]}/medium/x" alt="Crates of fish on the market" width="320"><figcaption>At the market</figcaption></figure>'
        + "<p>Fish sold out by ten; the cafe on the quay stayed full until noon.</p>" * 6)
made = call("POST", "/api/rsc", {"category": "article", "published": True,
    "props": {"title": "Harbour day", "summary": "A morning at the harbour.", "body": body}})
call("POST", f"/api/rsc/{made['id']}/edges", {"predicate": "depiction", "object": featured["id"]})
print(f"/page/{made['id']}")
EOF
)
# Its canonical address (/en/page/{id}/{slug}), as a reader arrives at it.
article=$(curl -s "$url/en$article" | sed -n 's|.*<link rel="canonical" href="https\{0,1\}://[^/]*\([^"]*\)".*|\1|p' | head -1)

failed=0
for page in /en/ "$article"; do
    for round in $(seq "$ROUNDS"); do
        CHROME_PATH=/usr/bin/chromium "$tools/node_modules/.bin/lighthouse" "$url$page" --quiet \
            --chrome-flags="--headless=new --no-sandbox" --output=json \
            --output-path="$work/lh-$round.json" >/dev/null 2>&1
    done
    python3 - "$page" "$work" "$ROUNDS" <<'EOF' || failed=1
import json, statistics, sys
page, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = [json.load(open(f"{work}/lh-{r}.json")) for r in range(1, rounds + 1)]
score = lambda r, k: round(r["categories"][k]["score"] * 100)
keys = ["performance", "accessibility", "best-practices", "seo"]
median = {k: statistics.median(score(r, k) for r in runs) for k in keys}
print(f"{page}: " + ", ".join(f"{k} {median[k]:g}" for k in keys))
last = runs[-1]
for k in keys:
    for ref in last["categories"][k]["auditRefs"]:
        a = last["audits"][ref["id"]]
        if ref["weight"] > 0 and a["score"] is not None and a["score"] < 1:
            print(f"    {k}: {ref['id']} {a['score']} {a.get('displayValue', '')}")
goals = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}
sys.exit(0 if all(median[k] >= goals[k] for k in keys) else 1)
EOF
done
[ "$failed" = 0 ] || { echo "below the goals (performance >= 95; accessibility, best practices, SEO 100)" >&2; exit 1; }
