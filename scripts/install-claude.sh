#!/bin/sh
# install-claude.sh installs one version of the Claude Code client that the
# end-to-end tests drive, and prints the path of its native binary.
#
# Usage: scripts/install-claude.sh [VERSION] [DIR]
#
# VERSION (x.y.z) defaults to $CLAUDE_CODE_VERSION, else 2.1.197, the oldest
# version hookwatch supports; DIR defaults to <repo>/.e2e/claude-VERSION
# (git-ignored), where the tests look for every installed version. Run it
# once per version of the matrix (.ci/run installs 2.1.197 and 2.1.332).
#
# It is idempotent: when the binary of that version is already present,
# nothing is downloaded (scripts/npm-pinned.sh).
set -eu

VERSION="${CLAUDE_CODE_VERSION:-2.1.197}"
case "${1:-}" in
[0-9]*.[0-9]*.[0-9]*) VERSION="$1"; shift ;;
esac
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$repo/.e2e/claude-$VERSION}"

case "$(uname -m)" in
x86_64 | amd64) arch=x64 ;;
aarch64 | arm64) arch=arm64 ;;
*) echo "install-claude.sh: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
bin="$dir/node_modules/@anthropic-ai/claude-code-linux-$arch/claude"
. "$repo/scripts/npm-pinned.sh"
install_pinned install-claude.sh @anthropic-ai/claude-code "$VERSION" "$dir" "$bin"
