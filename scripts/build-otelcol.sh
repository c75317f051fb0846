#!/bin/sh
# build-otelcol.sh builds the OpenTelemetry Collector that the OTLP tests
# export to (OTLP/HTTP receiver, file exporter, health check) with the
# collector's builder, and prints the path of the binary.
#
# Usage: scripts/build-otelcol.sh [DIR]
#   (default: ${XDG_CACHE_HOME:-$HOME/.cache}/hookwatch/otelcol-$VERSION)
#
# It is idempotent: the binary lives in a directory named after the version,
# so a second run on the same machine prints it without building. Only the Go
# module proxy is needed. v0.162.0 is pinned because later otlpreceivers import
# a module the proxy here refuses; the contrib file exporter's test-only
# dependencies are refused as well, so the builder's own `go mod tidy` fails
# and is redone with -e.
set -eu

VERSION="${OTELCOL_VERSION:-0.162.0}"
dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/hookwatch/otelcol-$VERSION}"
bin="$dir/otelcol-hookwatch"
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

mkdir -p "$dir"
work="$(mktemp -d "$dir/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# -mod=mod: the generated module has no vendor directory and its go.sum is
# written as it builds; keep the machine's -buildvcs=false.
export GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 GOBIN="$work/bin"

cat >"$work/manifest.yaml" <<YAML
dist:
  name: otelcol-hookwatch
  description: OTLP/HTTP in, OTLP-JSON file out (hookwatch's trace tests)
  output_path: $work/src
  version: $VERSION
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v$VERSION
exporters:
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v$VERSION
extensions:
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension v$VERSION
YAML

echo "build-otelcol.sh: building the collector v$VERSION (a few minutes, once per machine)" >&2
go install "go.opentelemetry.io/collector/cmd/builder@v$VERSION" >&2
"$GOBIN/builder" --config="$work/manifest.yaml" --skip-compilation >&2 || true
if [ ! -f "$work/src/go.mod" ]; then
	echo "build-otelcol.sh: the builder generated no sources" >&2
	exit 1
fi
(cd "$work/src" && go mod tidy -e >&2 && go build -trimpath -ldflags="-s -w" -o "$work/otelcol" .)
mv "$work/otelcol" "$bin"
echo "$bin"
