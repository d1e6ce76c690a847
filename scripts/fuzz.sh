#!/usr/bin/env bash
# Fuzzes every target in fuzz/fuzz_targets for SECONDS each (default 10, the
# suite's short run; `scripts/fuzz.sh 600` for a longer one). Exits non-zero if
# any target crashes, with the panic and the input that made it.
#
# cargo-fuzz builds with nightly flags; stable rustc takes them with
# RUSTC_BOOTSTRAP=1. No sanitizer by default: the code the targets reach is safe
# Rust (AddressSanitizer finds memory errors, which safe code cannot make), and
# without it the build takes 171 s instead of 271 s and each second of fuzzing
# runs 4-6 times as many inputs (measured 2026-11-28; docs/development.md).
# BULWARK_FUZZ_SANITIZER=address brings it back, for a long run after a change
# to code that uses `unsafe` or calls C. The build goes to its own target directory (other RUSTFLAGS would rebuild the main one):
# fuzz/target unless BULWARK_FUZZ_TARGET_DIR says otherwise. What the runs learn
# is kept there too (corpus/<target>), so each run starts where the last one
# stopped; fuzz/corpus/<target> holds the committed seeds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-10}"

# scripts/test.sh lints through clippy-driver as the compiler wrapper; neither
# cargo-fuzz's install nor the fuzz build is linted.
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
"$root/scripts/ensure-cargo-fuzz.sh"
export RUSTC_BOOTSTRAP=1
unset CARGO_TARGET_DIR
target_dir="${BULWARK_FUZZ_TARGET_DIR:-$root/fuzz/target}"
# Optimised (-O), with debug assertions and overflow checks (-a). A --dev build
# compiles faster (cold, 2 cores: about 3 minutes against 7) but runs the
# sanitiser about 50 times slower (300 inputs in 10 s), too few to find anything.
build=(-O -a -s "${BULWARK_FUZZ_SANITIZER:-none}" --target-dir "$target_dir")

cargo fuzz build "${build[@]}"
failed=()
for target in $(cargo fuzz list); do
    learned="$target_dir/corpus/$target"
    log="$target_dir/logs/$target.log"
    mkdir -p "$learned" "$(dirname "$log")"
    # -timeout: an input that takes longer than that is a hang, reported as a crash.
    if cargo fuzz run "${build[@]}" "$target" "$learned" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 >"$log" 2>&1; then
        echo "fuzz $target: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log" | tail -1)"
    else
        failed+=("$target")
        echo "fuzz $target: FAILED (whole output in $log)" >&2
        grep -A4 'panicked at\|ERROR: AddressSanitizer\|ERROR: libFuzzer: timeout' "$log" | head -12 >&2
        crash="$(grep -o 'Test unit written to .*' "$log" | tail -1 | cut -d' ' -f5-)"
        if [ -n "$crash" ]; then
            echo "the input, $crash (replay: RUSTC_BOOTSTRAP=1 cargo fuzz run $target $crash):" >&2
            od -c "$crash" | head -20 >&2
        fi
    fi
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzzing found crashes in: ${failed[*]}" >&2
    exit 1
fi
