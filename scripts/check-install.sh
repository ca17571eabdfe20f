#!/usr/bin/env bash
# Prove, offline, that a release made with scripts/release-prepare.sh installs
# with `go install github.com/acc-go/acc/cmd/acc@VERSION` on a machine without
# a clone (docs/design.md#modules-and-releases, docs/install.md):
#
#   1. copy the work tree (what Git tracks or would track) into a temporary
#      Git repository and run scripts/release-prepare.sh there for a
#      throwaway version;
#   2. build a file:// module proxy from the release commit the way a module
#      proxy builds one from the tags (internal/releaseprep proxy) — so a
#      go.sum hash that does not match what the tags will serve fails here;
#   3. from an empty directory, with GOWORK=off and no GOFLAGS, go install
#      the three binaries at that version from that proxy (third-party
#      modules come from the module cache's download directory, then
#      proxy.golang.org), and check that `acc --version` prints the version.
#
# The throwaway version is removed from the module cache afterwards. It is
# this run's own (v0.0.1-installcheck.<time>.<pid>), so two runs at once
# (two CI jobs or work trees on one machine, sharing the module cache)
# neither remove nor reuse each other's copy; what a killed run left is
# removed a day later. Usage:
# scripts/check-install.sh   (exit 0 when the installed acc says the version)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
prefix=v0.0.1-installcheck
version=$prefix.$(date +%s).$$
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_COMMON_DIR GIT_PREFIX GIT_NAMESPACE
start=$(date +%s)
modcache=$(go env GOMODCACHE)
tmp=$(mktemp -d)

# forget removes a throwaway version ($1, a find pattern) from the shared
# module cache; with "stale", only copies older than a day. The directories
# left empty stay: another run may be about to write into them.
forget() {
	local d age=()
	[ "${2:-}" = stale ] && age=(-mmin +1440)
	for d in "$modcache/github.com/acc-go" "$modcache/cache/download/github.com/acc-go"; do
		[ -d "$d" ] || continue
		# $1.[a-z]*: its .info, .mod, .zip, .ziphash and .lock, not those of
		# a longer version that $1 begins (another run's $1.<time>.<pid>).
		find "$d" \( -name "*@$1" -o -name "$1.[a-z]*" \) "${age[@]}" -prune -exec chmod -R u+w {} + -exec rm -rf {} +
	done
}
cleanup() {
	forget "$version"
	chmod -R u+w "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
forget "$prefix" # what the runs before per-run versions left
forget "$prefix.*" stale

repo=$tmp/repo
mkdir -p "$repo" "$tmp/empty" "$tmp/bin"
(cd "$src" && git ls-files -z -co --exclude-standard) |
	(cd "$src" && tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C "$repo"
export GIT_AUTHOR_NAME=check-install GIT_AUTHOR_EMAIL=check-install@invalid \
	GIT_COMMITTER_NAME=check-install GIT_COMMITTER_EMAIL=check-install@invalid
git -C "$repo" init --quiet --initial-branch=main
git -C "$repo" add -A
git -C "$repo" commit --quiet -m "the tree under test"

# Everything third-party comes from the module cache when it is there.
export GOFLAGS= GOPROXY="file://$modcache/cache/download,https://proxy.golang.org"
# The go command keeps an index of each module it extracted, in GOCACHE,
# keyed by path and version on the assumption that a version never changes;
# the throwaway version does change between runs (a file moved to another
# module), and a stale index makes go install look for files that are gone.
export GODEBUG=goindex=0
"$repo/scripts/release-prepare.sh" "$version" >"$tmp/prepare.out"
echo "check-install: release commit made ($(($(date +%s) - start))s)"
if git -C "$repo" diff --quiet HEAD~1 -- go.mod; then
	echo "check-install: release-prepare left the root go.mod as it was" >&2
	exit 1
fi
# At the release commit even a workspace build wants the siblings at the
# release version from a proxy, so the proxy is built by a releaseprep built
# from the tree under test before it.
(cd "$src" && go build -o "$tmp/releaseprep" ./internal/releaseprep)
"$tmp/releaseprep" proxy -dir "$repo" -version "$version" -rev HEAD -out "$tmp/proxy"
echo "check-install: proxy built from it ($(($(date +%s) - start))s)"

cd "$tmp/empty"
GOWORK=off GOBIN="$tmp/bin" GONOSUMDB=github.com/acc-go/acc \
	GOPROXY="file://$tmp/proxy,$GOPROXY" \
	go install "github.com/acc-go/acc/cmd/acc@$version" "github.com/acc-go/acc/cmd/acc-hook@$version" "github.com/acc-go/acc/cmd/acc-mcp@$version"
got=$("$tmp/bin/acc" --version)
case $got in
*"$version"*) ;;
*)
	echo "check-install: the installed acc --version says \"$got\", not $version" >&2
	exit 1
	;;
esac
for b in acc-hook acc-mcp; do
	[ -x "$tmp/bin/$b" ] || { echo "check-install: go install made no $b" >&2; exit 1; }
done
echo "check-install: go install …/cmd/acc@$version from the release commit works; acc --version: $got ($(($(date +%s) - start))s)"
