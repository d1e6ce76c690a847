#!/usr/bin/env bash
# A real SMTP server for the mail tests: Python's aiosmtpd (Debian's
# python3-aiosmtpd, or PyPI's aiosmtpd where apt is not available). The tests
# start it themselves, each on a free port, with the first of `python3` and
# `/usr/bin/python3` that has it (a pyenv `python3` on the PATH does not see
# Debian's packages); this only makes sure one of them does. Idempotent.
set -euo pipefail

has_aiosmtpd() {
    local python
    for python in python3 /usr/bin/python3; do
        if command -v "$python" >/dev/null 2>&1 && "$python" -c "import aiosmtpd" >/dev/null 2>&1; then
            return 0
        fi
    done
    return 1
}

if has_aiosmtpd; then
    exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
    echo "ensure-smtp: installing Debian's python3-aiosmtpd for the mail tests" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-aiosmtpd >/dev/null
else
    echo "ensure-smtp: installing aiosmtpd from PyPI for the mail tests" >&2
    python3 -m pip install --quiet aiosmtpd
fi
if ! has_aiosmtpd; then
    echo "ensure-smtp: aiosmtpd is installed but no python3 can import it" >&2
    exit 1
fi
