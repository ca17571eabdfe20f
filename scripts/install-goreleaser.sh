#!/usr/bin/env bash
# Install the pinned GoReleaser that builds acc's release archives
# (docs/releasing.md) into a cache outside the clone, and print its path:
#
#   ${ACC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acc-tools}/goreleaser-<version>/goreleaser
#
# GoReleaser is built from source through the Go module proxy (go install),
# since nothing else can be downloaded here. A complete install is reused at
# once. A new one is built into a temporary directory, checked by running
# goreleaser --version, and then renamed into place, so the cache never holds
# a half-made install. The first build compiles several hundred packages and
# takes minutes: progress goes to stderr, the path alone to stdout.
#
# Usage: GORELEASER=$(scripts/install-goreleaser.sh)
set -euo pipefail

# The one place the version is pinned. v2.16 and newer need a newer Go than
# the project's.
VERSION=v2.15.1
MODULE=github.com/goreleaser/goreleaser/v2

cache="${ACC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acc-tools}"
dir="$cache/goreleaser-$VERSION"
exe="$dir/goreleaser"

# installed says whether $1 is a goreleaser that reports the pinned version.
installed() {
	local out
	[ -x "$1" ] || return 1
	out=$("$1" --version 2>&1) || return 1
	case $out in *"GitVersion:"*"${VERSION#v}"*) return 0 ;; esac
	return 1
}

if [ -f "$dir/.acc-installed" ] && installed "$exe"; then
	echo "install-goreleaser: goreleaser $VERSION already in $dir" >&2
	echo "$exe"
	exit 0
fi

command -v go >/dev/null || { echo "install-goreleaser: go is not on PATH" >&2; exit 1; }
mkdir -p "$cache"
# A directory without the mark is not an install; partial ones older than an
# hour were left by a killed run.
rm -rf "$dir"
find "$cache" -maxdepth 1 -name "goreleaser-$VERSION.partial-*" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
tmp=$(mktemp -d "$cache/goreleaser-$VERSION.partial-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
echo "install-goreleaser: building $MODULE@$VERSION into $dir (the first build downloads and compiles several hundred packages: minutes)" >&2
# Outside any module or workspace: go install pkg@version uses GoReleaser's
# own go.mod. -v names each package as it is built; a line every 100 of them
# shows progress, and the whole log is shown when the build fails.
log="$tmp/build.log"
set +e
(cd "$tmp" && GOWORK=off GOBIN="$tmp" go install -v -trimpath "$MODULE@$VERSION") 2>&1 |
	tee "$log" | awk -v start="$start" '{ n++ } n % 100 == 0 { printf "install-goreleaser: %d packages built (%ds)\n", n, systime() - start; fflush() }' >&2
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
	echo "install-goreleaser: go install failed (exit $status):" >&2
	cat "$log" >&2
	exit 1
fi
rm -f "$log"
installed "$tmp/goreleaser" || {
	echo "install-goreleaser: the built goreleaser does not report $VERSION: $("$tmp/goreleaser" --version 2>&1 | head -20)" >&2
	exit 1
}
echo "$MODULE@$VERSION" >"$tmp/.acc-installed"
if ! mv -T "$tmp" "$dir" 2>/dev/null && [ ! -f "$dir/.acc-installed" ]; then
	echo "install-goreleaser: cannot move the install into $dir" >&2
	exit 1
fi
echo "install-goreleaser: goreleaser $VERSION installed in $dir in $(($(date +%s) - start))s" >&2
echo "$exe"
