#!/bin/sh
# install-codex.sh installs the pinned Codex CLI that the Codex end-to-end
# tests drive, and prints the path of its static (musl) native binary.
#
# Usage: scripts/install-codex.sh [DIR]   (default: <repo>/.e2e/codex, git-ignored)
#
# It is idempotent: when the binary of the pinned version is already present,
# nothing is downloaded (scripts/npm-pinned.sh).
set -eu

VERSION="${CODEX_VERSION:-0.169.0}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$repo/.e2e/codex}"

case "$(uname -m)" in
x86_64 | amd64) arch=x64 triple=x86_64-unknown-linux-musl ;;
aarch64 | arm64) arch=arm64 triple=aarch64-unknown-linux-musl ;;
*) echo "install-codex.sh: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
bin="$dir/node_modules/@openai/codex-linux-$arch/vendor/$triple/bin/codex"
. "$repo/scripts/npm-pinned.sh"
install_pinned install-codex.sh @openai/codex "$VERSION" "$dir" "$bin"
