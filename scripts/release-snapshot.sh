#!/usr/bin/env bash
# Build the release archives as a snapshot into ./dist (nothing is published)
# with the pinned GoReleaser, then check them (docs/releasing.md):
#
#   - one tar.gz per target (linux and darwin, amd64 and arm64) and a
#     checksums file, and nothing else of that kind;
#   - every archive is listed in the checksums file and matches it;
#   - every archive holds acc, acc-hook and acc-mcp, README.md and LICENSE
#     in its one top directory;
#   - this machine's own archive runs: acc --version prints the snapshot's
#     version ("acc version v<version>").
#
# Usage: scripts/release-snapshot.sh   (make release-snapshot)
# RELEASE_PARALLELISM sets GoReleaser's --parallelism (default: the cores).
set -euo pipefail
cd "$(dirname "$0")/.."

# A caller's GIT_DIR (make run from a Git hook) would point GoReleaser's git
# at another repository.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

fail() {
	echo "release-snapshot: $*" >&2
	exit 1
}

goreleaser=$(scripts/install-goreleaser.sh)

# Only the root module's tags (vX.Y.Z) version the binaries; the nested
# modules' tags (pkg/<dir>/vX.Y.Z) must not be taken for one.
if tag=$(git describe --tags --match 'v[0-9]*' --abbrev=0 2>/dev/null); then
	export GORELEASER_CURRENT_TAG=$tag
fi

start=$(date +%s)
echo "release-snapshot: building the archives into ./dist (the first run compiles every target: minutes)"
"$goreleaser" release --snapshot --clean --parallelism "${RELEASE_PARALLELISM:-$(nproc 2>/dev/null || echo 2)}"
echo "release-snapshot: built in $(($(date +%s) - start))s; checking"

# The version GoReleaser gave this snapshot, from its own record of the run.
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' dist/metadata.json | head -n 1)
[ -n "$version" ] || fail "no version in dist/metadata.json"

sums="dist/acc_${version}_checksums.txt"
[ -f "$sums" ] || fail "no checksums file $sums"

targets=(linux_amd64 linux_arm64 darwin_amd64 darwin_arm64)
n=$(find dist -maxdepth 1 -name '*.tar.gz' | wc -l)
[ "$n" -eq ${#targets[@]} ] || fail "dist has $n archives, want ${#targets[@]}: $(ls dist)"
[ "$(wc -l <"$sums")" -eq ${#targets[@]} ] || fail "$sums lists $(wc -l <"$sums") files, want ${#targets[@]}"
(cd dist && sha256sum --check --strict "$(basename "$sums")") || fail "an archive does not match $sums"

for t in "${targets[@]}"; do
	name="acc_${version}_$t"
	archive="dist/$name.tar.gz"
	[ -f "$archive" ] || fail "no archive $archive"
	grep -q "  $name.tar.gz\$" "$sums" || fail "$archive is not in $sums"
	listing=$(tar -tzf "$archive") || fail "cannot list $archive"
	for f in acc acc-hook acc-mcp README.md LICENSE; do
		grep -qx "$name/$f" <<<"$listing" || fail "$archive lacks $name/$f; it holds: $listing"
	done
done

# This machine's archive runs and says which version it is.
case $(uname -s) in Linux) os=linux ;; Darwin) os=darwin ;; *) os="" ;; esac
case $(uname -m) in x86_64 | amd64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) arch="" ;; esac
if [ -n "$os" ] && [ -n "$arch" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tar -xzf "dist/acc_${version}_${os}_$arch.tar.gz" -C "$tmp"
	got=$("$tmp/acc_${version}_${os}_$arch/acc" --version 2>&1) || fail "acc --version failed: $got"
	[ "$got" = "acc version v$version" ] || fail "acc --version printed '$got', want 'acc version v$version'"
	echo "release-snapshot: ${os}_$arch acc --version: $got"
else
	echo "release-snapshot: no archive for $(uname -sm) to run; the others were checked"
fi
echo "release-snapshot: ${#targets[@]} archives and $(basename "$sums") in ./dist check out ($(($(date +%s) - start))s)"
