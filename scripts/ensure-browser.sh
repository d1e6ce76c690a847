#!/usr/bin/env bash
# Headless Chromium (Debian's package) and playwright-core (npm) for the browser
# tests. Idempotent: installs only what is missing. Meant to be sourced or run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v chromium >/dev/null 2>&1; then
    echo "installing Debian's chromium for the browser tests" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if ! command -v node >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
if [ ! -d "$root/tests/browser/node_modules/playwright-core" ] || [ ! -d "$root/tests/browser/node_modules/axe-core" ]; then
    (cd "$root/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
fi
