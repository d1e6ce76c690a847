#!/usr/bin/env bash
# The whole test suite, as CI runs it. Safe to run again and again; installs or
# starts what the tests need (PostgreSQL, when the store tests need it) by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -f scripts/ensure-postgres.sh ]; then
    # shellcheck source=/dev/null
    source scripts/ensure-postgres.sh
    trap 'type bulwark_pg_cleanup >/dev/null 2>&1 && bulwark_pg_cleanup' EXIT
fi

# A real SMTP server (aiosmtpd) for the mail and password reset tests.
./scripts/ensure-smtp.sh
./scripts/ensure-ops-tools.sh

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# No import circle of more than two files in any crate (docs/architecture.md).
python3 scripts/import-circles.py
# Libraries, binaries and integration tests; benchmarks are run by bench/, not here.
cargo test --workspace --lib --bins --tests
cargo test --workspace --doc
# Every fuzz target for a short while (docs/security.md, "Fuzzing").
./scripts/fuzz.sh 10
# On CI's clean clone the fuzz build (several GB, sanitised) is not needed
# again: give the disk back before the browser and API steps build more.
if [ "${CI:-}" = true ]; then rm -rf fuzz/target; fi

# Pages people click: headless Chromium against the real binary, with the
# admin's vendored browser code checked against its pinned npm packages.
./scripts/vendor-admin.sh --check
./scripts/ensure-browser.sh
cargo build -q -p bulwark
(cd tests/browser && node --test)

# The JSON API against its own OpenAPI document (schemathesis, a minute).
./scripts/api-conformance.sh 60
