#!/usr/bin/env bash
# Make the release commit for VERSION (docs/design.md#modules-and-releases):
# from a clean work tree, detach HEAD, rewrite every go.mod to require the
# sibling modules at VERSION, drop the root go.mod's replace directives, fill
# the root go.sum with the siblings' hashes (internal/releaseprep), and commit.
# The commit is on no branch: main keeps v0.0.0 and the replace directives, so
# it goes on building without any tag. It prints the tags to create on that
# commit and the command that publishes them; it creates and pushes nothing.
#
# Usage: scripts/release-prepare.sh vX.Y.Z
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
	echo "usage: scripts/release-prepare.sh vX.Y.Z" >&2
	exit 2
fi
version=$1
if [ -n "$(git status --porcelain)" ]; then
	echo "release-prepare: the work tree has changes; commit or stash them first (git status)" >&2
	exit 1
fi
# Build the helper before changing anything, so a bad version or a broken
# build leaves the tree and HEAD as they were.
tool=$(mktemp -d)
trap 'rm -rf "$tool"' EXIT
go build -o "$tool/releaseprep" ./internal/releaseprep
"$tool/releaseprep" tags -version "$version" >"$tool/tags"
base=$(git rev-parse HEAD)
git switch --quiet --detach
if ! "$tool/releaseprep" prepare -version "$version"; then
	git checkout --quiet -- .
	git switch --quiet - 2>/dev/null || git checkout --quiet "$base"
	echo "release-prepare: nothing changed; HEAD is back where it was" >&2
	exit 1
fi
git commit --quiet -a -m "release $version: require the sibling modules at $version and drop the root's replace directives, so that go install …@$version works"
commit=$(git rev-parse HEAD)
echo "release-prepare: release commit $commit (on no branch; its parent is $base)"
echo "Tag it and publish the tags:"
echo
while read -r tag; do echo "  git tag $tag $commit"; done <"$tool/tags"
echo "  git push origin $(tr '\n' ' ' <"$tool/tags")"
echo
echo "Then go back to your branch: git switch -"
