#!/usr/bin/env bash
# Refreshes the third-party ES modules under static/vendor/ from npm.
#
# The dashboard is served as no-build ES modules so that a fresh clone runs
# the full UI with `go run ./cmd/hookwatch serve` and no Node toolchain; the
# price is that dependencies are committed as files. This script is the only
# way they change: exact versions, the packages' own dist files and licenses,
# and one edit — preact/hooks imports the bare specifier "preact", which a
# browser without an import map cannot resolve (an inline import map would
# need an exception in the Content-Security-Policy), so it is pointed at the
# sibling file.
set -euo pipefail
cd "$(dirname "$0")"

PREACT=11.2.0
HTM=3.1.1
UPLOT=1.6.32

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "preact@$PREACT" "htm@$HTM" "uplot@$UPLOT" >/dev/null)
for t in "$tmp"/*.tgz; do
	d="$tmp/$(basename "$t" .tgz)"
	mkdir -p "$d" && tar -xzf "$t" -C "$d"
done

out=static/vendor
rm -rf "$out" && mkdir -p "$out"
cp "$tmp/preact-$PREACT/package/dist/preact.mjs" "$out/preact.mjs"
sed 's/from"preact"/from".\/preact.mjs"/' "$tmp/preact-$PREACT/package/hooks/dist/hooks.mjs" >"$out/preact-hooks.mjs"
cp "$tmp/htm-$HTM/package/dist/htm.mjs" "$out/htm.mjs"
cp "$tmp/uplot-$UPLOT/package/dist/uPlot.esm.js" "$out/uPlot.esm.js"
cp "$tmp/uplot-$UPLOT/package/dist/uPlot.min.css" "$out/uPlot.min.css"
cp "$tmp/preact-$PREACT/package/LICENSE" "$out/LICENSE.preact"
cp "$tmp/htm-$HTM/package/LICENSE" "$out/LICENSE.htm"
cp "$tmp/uplot-$UPLOT/package/LICENSE" "$out/LICENSE.uplot"
cat >"$out/VERSIONS" <<V
preact $PREACT (MIT) dist/preact.mjs, hooks/dist/hooks.mjs (import of "preact" made relative)
htm $HTM (Apache-2.0) dist/htm.mjs
uplot $UPLOT (MIT) dist/uPlot.esm.js, dist/uPlot.min.css
V
grep -q 'from"./preact.mjs"' "$out/preact-hooks.mjs" || { echo "vendor.sh: preact/hooks import not rewritten" >&2; exit 1; }
