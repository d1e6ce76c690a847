#!/usr/bin/env bash
# The real programs the operations tests talk to: Debian's `prometheus` (a
# Prometheus server that scrapes /metrics), `varnish` with `varnish-modules`
# (xkey, for purges by dependency key) and `pebble` (an ACME test server), and
# PyPI's `prometheus-client` (a parser of the text format) and `feedparser`
# (a feed reader's parser), and `xmllint`
# (Debian's `libxml2-utils`) with sitemaps.org's sitemap schema (as npm's
# `sitemap` package ships it, in target/schemas/). The tests start
# each program themselves, on free ports in a temporary folder; this only makes
# sure they are installed. Idempotent.
set -euo pipefail

missing=()
# Debian's prometheus package brings promtool (the rules' checker) too.
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v varnishd >/dev/null 2>&1 || [ -x /usr/sbin/varnishd ] || missing+=(varnish)
[ -e /usr/lib/x86_64-linux-gnu/varnish/vmods/libvmod_xkey.so ] \
    || compgen -G "/usr/lib/*/varnish/vmods/libvmod_xkey.so" >/dev/null \
    || missing+=(varnish-modules)
command -v pebble >/dev/null 2>&1 || [ -x /usr/bin/pebble ] || missing+=(pebble)
command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)

if [ ${#missing[@]} -gt 0 ]; then
    echo "ensure-ops-tools: installing ${missing[*]}" >&2
    apt-get update -qq
    # Packages must not start their services: the tests start their own.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

has_parser() {
    local python
    for python in python3 /usr/bin/python3; do
        if command -v "$python" >/dev/null 2>&1 \
            && "$python" -c "import prometheus_client.parser" >/dev/null 2>&1; then
            return 0
        fi
    done
    return 1
}
if ! has_parser; then
    if command -v apt-get >/dev/null 2>&1 \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-prometheus-client >/dev/null 2>&1 \
        && has_parser; then
        :
    else
        python3 -m pip install --quiet prometheus-client
    fi
fi
has_parser || { echo "ensure-ops-tools: prometheus-client is installed but no python3 imports it" >&2; exit 1; }

# PyPI's feedparser, the feed reader the feed tests read the feeds with.
if ! python3 -c "import feedparser" >/dev/null 2>&1; then
    if ! { command -v apt-get >/dev/null 2>&1 \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-feedparser >/dev/null 2>&1 \
        && python3 -c "import feedparser" >/dev/null 2>&1; }; then
        python3 -m pip install --quiet feedparser \
            || python3 -m pip install --quiet --break-system-packages feedparser
    fi
fi
python3 -c "import feedparser" || { echo "ensure-ops-tools: no python3 imports feedparser" >&2; exit 1; }

# sitemaps.org's schema of a sitemap (urlset), for the SEO module's test.
schemas="$(cd "$(dirname "$0")/.." && pwd)/target/schemas"
if [ ! -s "$schemas/sitemap.xsd" ]; then
    mkdir -p "$schemas"
    work=$(mktemp -d)
    (cd "$work" && npm pack --silent sitemap@8.0.3 >/dev/null && tar xzf sitemap-8.0.3.tgz)
    cp "$work/package/schema/sitemap.xsd" "$schemas/sitemap.xsd"
    rm -rf "$work"
fi
