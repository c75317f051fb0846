#!/bin/sh
# build-jaeger.sh builds Jaeger v2 (the all-in-one binary: an OpenTelemetry
# Collector distribution with Jaeger's storage and query API), which the OTLP
# tests export to and read traces back from, and prints the path of the binary.
#
# Usage: scripts/build-jaeger.sh [DIR]
#   (default: ${XDG_CACHE_HOME:-$HOME/.cache}/hookwatch/jaeger-$VERSION)
#
# It is idempotent: the binary lives in a directory named after the version,
# so a second run on the same machine prints it without building. Only the Go
# module proxy is needed. Jaeger v2 is published as the module
# github.com/jaegertracing/jaeger v1.x (its v2.x tags have no module path to
# match). `go install` refuses it because its go.mod has replace directives,
# so the module's source is downloaded and built in place, with its own go.sum
# (older versions of its dependencies have no checksum-database entries here).
# A cold build takes about 6.5 minutes and fills about 1.3 GB of module cache.
set -eu

VERSION="${JAEGER_VERSION:-1.76.0}"
dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/hookwatch/jaeger-$VERSION}"
bin="$dir/jaeger"
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

mkdir -p "$dir"
work="$(mktemp -d "$dir/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# -mod=mod: the module is built outside the module cache, without a vendor
# directory; keep the machine's -buildvcs=false.
export GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0

echo "build-jaeger.sh: building Jaeger v$VERSION (several minutes, once per machine)" >&2
# Downloaded from the empty work directory: no module around it to change.
src="$(cd "$work" && go mod download -json "github.com/jaegertracing/jaeger@v$VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
if [ -z "$src" ] || [ ! -f "$src/go.mod" ]; then
	echo "build-jaeger.sh: the module proxy gave no source for jaeger v$VERSION" >&2
	exit 1
fi
# The module cache is read-only: build in a writable copy, where go may
# update go.sum.
cp -R "$src" "$work/src"
chmod -R u+w "$work/src"
(cd "$work/src" && go build -trimpath -ldflags="-s -w" -o "$work/jaeger" ./cmd/jaeger >&2)
mv "$work/jaeger" "$bin"
echo "$bin"
