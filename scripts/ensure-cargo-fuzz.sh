#!/usr/bin/env bash
# cargo-fuzz (crates.io), pinned, for scripts/fuzz.sh. Idempotent: installs only
# when that version is not the one on PATH. Meant to be sourced or run.
set -euo pipefail
BULWARK_CARGO_FUZZ_VERSION=0.13.2
if ! cargo-fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $BULWARK_CARGO_FUZZ_VERSION"; then
    echo "installing cargo-fuzz $BULWARK_CARGO_FUZZ_VERSION from crates.io" >&2
    # Its own temporary build directory, not the project's target directory.
    env -u CARGO_TARGET_DIR cargo install --quiet --locked \
        cargo-fuzz --version "=$BULWARK_CARGO_FUZZ_VERSION"
fi
