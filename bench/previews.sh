#!/usr/bin/env bash
# Preview making against Debian's vipsthumbnail (libvips-tools) on the same 20
# photos, in the same run (modules/media/benches/previews.rs says how).
#
#   bench/previews.sh          # 20 photos
#   bench/previews.sh 40
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
need vipsthumbnail libvips-tools
cargo bench -q -p bulwark-module-media --bench previews -- "${1:-20}"
