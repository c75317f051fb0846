# npm-pinned.sh is sourced by the install scripts of the real clients the
# end-to-end tests drive (install-claude.sh, install-codex.sh).
#
# install_pinned NAME PACKAGE VERSION DIR BIN installs PACKAGE@VERSION into
# DIR with npm unless that version is there already with its native binary
# BIN, checks that BIN exists afterwards and prints its path. NAME is the
# calling script's, for its error messages. The npm package pulls the native
# Linux binary through its optional dependency, so no network beyond the
# npm registry is needed.
install_pinned() {
	name="$1" package="$2" version="$3" dir="$4" bin="$5"
	pkg="$dir/node_modules/$package/package.json"
	installed=""
	if [ -f "$pkg" ]; then
		installed="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$pkg" | head -n 1)"
	fi
	if [ "$installed" != "$version" ] || [ ! -x "$bin" ]; then
		mkdir -p "$dir"
		npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
			"$package@$version" >&2
	fi
	if [ ! -x "$bin" ]; then
		echo "$name: $bin missing after npm install" >&2
		exit 1
	fi
	echo "$bin"
}
