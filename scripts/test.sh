#!/usr/bin/env bash
# The whole test suite, as CI runs it. Safe to run again and again; installs or
# starts what the tests need (PostgreSQL, an SMTP sink, Chromium, the ops
# tools) by itself. The quick checks come first, so a failure shows early;
# each step's time is printed at the end (also when a step fails).
# docs/development.md says what each step holds and how to run one test.
set -euo pipefail
cd "$(dirname "$0")/.."

steps=()
suite_started=$(date +%s)
report() {
    local rc=$?
    if [ "${#steps[@]}" -gt 0 ]; then
        echo
        echo "== time per step"
        printf '%s\n' "${steps[@]}"
        printf '%6ss  %s\n' "$(($(date +%s) - suite_started))" "the whole suite"
    fi
    if type bulwark_pg_cleanup >/dev/null 2>&1; then bulwark_pg_cleanup; fi
    return "$rc"
}
trap report EXIT

# step NAME COMMAND...: runs the command, keeps its time for the report.
step() {
    local name=$1
    shift
    echo "== $name"
    local started
    started=$(date +%s)
    "$@"
    steps+=("$(printf '%6ss  %s' "$(($(date +%s) - started))" "$name")")
}

step "format (cargo fmt --check)" cargo fmt --all -- --check
# No import circle of more than two files in any crate (docs/architecture.md).
step "import circles" python3 scripts/import-circles.py

# Clippy lints our crates while they are built for the tests, not in a pass of
# its own: clippy-driver as the workspace's compiler wrapper (what `cargo
# clippy` itself sets; CLIPPY_ARGS is how it hands the lint flags over) lints a
# crate and then compiles it, so the ~460 dependencies are not compiled a second
# time in check mode (a separate `cargo clippy` took 111-211 s of the suite).
# Every later cargo command of the suite runs with the same wrapper, so nothing
# is rebuilt; a plain `cargo test` afterwards rebuilds our crates (not the
# dependencies) without it. Same coverage as `cargo clippy --workspace
# --all-targets -- -D warnings`: every lib, bin, test, bench and example.
RUSTC_WORKSPACE_WRAPPER="$(command -v clippy-driver)"
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
step "build every target, clippy's lints as errors" cargo test --workspace --all-targets --no-run --quiet

# What the tests talk to: PostgreSQL, a real SMTP server (aiosmtpd), and the
# ops tools (pebble, Prometheus, Varnish, validators).
if [ -f scripts/ensure-postgres.sh ]; then
    # shellcheck source=/dev/null
    step "PostgreSQL" source scripts/ensure-postgres.sh
fi
step "SMTP sink" ./scripts/ensure-smtp.sh
step "ops tools" ./scripts/ensure-ops-tools.sh

# Unit tests (each crate's own, in src/), then the integration tests: one
# binary per crate, the system tests (tests/system) last. Benchmarks are run
# by bench/, not here. Every step names the workspace: `-p CRATE` alone
# resolves the dependencies' features for that crate only, and so builds
# many of them again (46 s to 164 s for the system tests' step).
step "unit tests" cargo test --workspace --lib --bins
step "integration tests" cargo test --workspace --test '*' --exclude bulwark-system-tests
step "system tests" cargo test --workspace --test system --test descriptors --test memory
step "doc tests" cargo test --workspace --doc

# Pages people click: headless Chromium against the real binary, with the
# admin's vendored browser code checked against its pinned npm packages.
step "vendored admin code" ./scripts/vendor-admin.sh --check
step "Chromium" ./scripts/ensure-browser.sh
# target/debug/bulwark, which they run, is the one the first build made for
# the command line's tests (a `cargo build` without the tests' dev-dependencies
# resolves features otherwise and builds 29 crates again).
# Two files at a time: each starts its own server and browser (161 s against
# 212 s one at a time; three at a time was no faster on two cores).
step "browser tests" bash -c 'cd tests/browser && node --test --test-concurrency=2'

# The JSON API against its own OpenAPI document (schemathesis, a minute).
step "API conformance" ./scripts/api-conformance.sh 60

# Every fuzz target for a short while (docs/security.md, "Fuzzing"); last,
# as its sanitised build is the longest and finds the least.
step "fuzzing" ./scripts/fuzz.sh 10
# On CI's clean clone the fuzz build (several GB) is not needed again.
if [ "${CI:-}" = true ]; then rm -rf fuzz/target; fi
