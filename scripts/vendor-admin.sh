#!/usr/bin/env bash
# The admin's third-party browser code, from the npm registry, pinned.
#
#   scripts/vendor-admin.sh          fetch each package, check its integrity,
#                                    write its files and licence into
#                                    modules/admin/lib/vendor/ and LICENSES.md
#   scripts/vendor-admin.sh --check  fetch again and compare with what is
#                                    committed (exit 1 on any difference)
#
# The vendored files are committed, so running Bulwark needs neither npm nor
# a build step. To upgrade a package: change its version and integrity below
# (`npm view NAME@VERSION dist.integrity`), run the script, read the diff.
set -euo pipefail

cd "$(dirname "$0")/.."
DEST=modules/admin/lib/vendor

# name | version | licence | dist.integrity (sha512 of the tarball) | files (package path:vendored name)
PACKAGES=(
  "squire-rte|2.4.8|MIT|sha512-pUp+LhZf2cUlhRKnD40DopUCdhmHlYUF7zGYqOBr8I/tQk/qZie/nXQ1DQcKlXqlr8Bw16TpE/7LQWxUeVrFNg==|dist/squire.js:squire.js"
  "dompurify|3.4.18|MPL-2.0 OR Apache-2.0|sha512-ofe3wI/uNm68HInABYFJYqQxRw1EaKAjNdrFVKqjUY+UZurvNd2L/HuQe097s/4RivWiZyP6tT7aoT8atjfhwg==|dist/purify.min.js:purify.min.js"
  "sortablejs|1.15.7|MIT|sha512-Kk8wLQPlS+yi1ZEf48a4+fzHa4yxjC30M/Sr2AnQu+f/MPwvvX9XjZ6OWejiz8crBsLwSq8GHqaxaET7u6ux0A==|Sortable.min.js:sortable.min.js"
  "diff|9.0.0|BSD-3-Clause|sha512-svtcdpS8CgJyqAjEQIXdb3OjhFVVYjzGAPO8WGCmRbrml64SPw/jJD4GoE98aR7r25A0XcgrK3F02yw9R/vhQw==|dist/diff.min.js:diff.min.js"
)

check=false
[[ "${1:-}" == "--check" ]] && check=true

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out"

{
  echo "# Third-party browser code in the admin"
  echo
  echo "Written by \`scripts/vendor-admin.sh\` from the npm registry; do not edit by hand."
  echo "Each file is the package's own build, unchanged but for a removed"
  echo "\`sourceMappingURL\` comment (the maps are not vendored)."
  echo
  echo "| Package | Version | Licence | Files |"
  echo "|---|---|---|---|"
} >"$out/LICENSES.md"

for entry in "${PACKAGES[@]}"; do
  IFS='|' read -r name version licence integrity files <<<"$entry"
  (cd "$work" && npm pack --silent "$name@$version" >/dev/null 2>&1) || {
    echo "vendor-admin: could not fetch $name@$version from the npm registry" >&2
    exit 1
  }
  tarball=$(ls "$work"/*.tgz)
  actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  if [[ "$actual" != "$integrity" ]]; then
    echo "vendor-admin: $name@$version does not match its pinned integrity" >&2
    echo "  pinned:  $integrity" >&2
    echo "  fetched: $actual" >&2
    exit 1
  fi
  mkdir -p "$work/pkg"
  tar xzf "$tarball" -C "$work/pkg"
  rm "$tarball"
  vendored=()
  for pair in $files; do
    from=${pair%%:*}
    to=${pair##*:}
    grep -v '^//# sourceMappingURL=' "$work/pkg/package/$from" >"$out/$to"
    vendored+=("$to")
  done
  licence_file=$(ls "$work/pkg/package" | grep -i -m1 '^licen[cs]e' || true)
  if [[ -z "$licence_file" ]]; then
    echo "vendor-admin: $name@$version has no licence file" >&2
    exit 1
  fi
  cp "$work/pkg/package/$licence_file" "$out/$name.LICENSE"
  echo "| [$name](https://www.npmjs.com/package/$name) | $version | $licence ([text]($name.LICENSE)) | ${vendored[*]} |" >>"$out/LICENSES.md"
  rm -rf "$work/pkg"
done

if $check; then
  if diff -r "$out" "$DEST" >/dev/null; then
    echo "vendor-admin: $DEST matches the pinned packages"
  else
    echo "vendor-admin: $DEST differs from the pinned packages:" >&2
    diff -rq "$out" "$DEST" >&2 || true
    exit 1
  fi
else
  rm -rf "$DEST"
  mkdir -p "$DEST"
  cp "$out"/* "$DEST"/
  echo "vendor-admin: wrote $DEST ($(ls "$DEST" | wc -l) files)"
fi
