#!/bin/sh
# install-claude.sh installs the pinned Claude Code client that the end-to-end
# tests drive, and prints the path of its native binary.
#
# Usage: scripts/install-claude.sh [DIR]   (default: <repo>/.e2e/claude, git-ignored)
#
# It is idempotent: when the binary of the pinned version is already present,
# nothing is downloaded. The npm package pulls the native Linux binary through
# its optional dependency, so no network beyond the npm registry is needed.
set -eu

VERSION="${CLAUDE_CODE_VERSION:-2.1.197}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$repo/.e2e/claude}"

case "$(uname -m)" in
x86_64 | amd64) arch=x64 ;;
aarch64 | arm64) arch=arm64 ;;
*) echo "install-claude.sh: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
bin="$dir/node_modules/@anthropic-ai/claude-code-linux-$arch/claude"
pkg="$dir/node_modules/@anthropic-ai/claude-code/package.json"

installed=""
if [ -f "$pkg" ]; then
	installed="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$pkg" | head -n 1)"
fi
if [ "$installed" != "$VERSION" ] || [ ! -x "$bin" ]; then
	mkdir -p "$dir"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
		"@anthropic-ai/claude-code@$VERSION" >&2
fi
if [ ! -x "$bin" ]; then
	echo "install-claude.sh: $bin missing after npm install" >&2
	exit 1
fi
echo "$bin"
