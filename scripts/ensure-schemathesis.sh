#!/usr/bin/env bash
# Installs schemathesis (PyPI) into its own virtual environment, once, and
# prints the path of its command. Idempotent: a second run only prints it.
# The version is pinned so a new release cannot change what the suite checks.
set -euo pipefail
version="4.32.5"
venv="${BULWARK_TOOLS_DIR:-$HOME/.cache/bulwark}/schemathesis-$version"
if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version" >&2
fi
echo "$venv/bin/schemathesis"
