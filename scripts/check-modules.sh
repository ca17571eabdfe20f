#!/usr/bin/env bash
# Check that every Go module of the workspace stands on its own
# (docs/design.md#modules-and-releases):
#
#   - every go.mod in the tree is listed in go.work, so none escapes the checks;
#   - `go mod tidy -diff` finds nothing to change in go.mod or go.sum;
#   - with GOWORK=off the module builds, vets, and compiles its tests
#     (`go test -run '^$'`: results are cached, so a second run only pays for
#     what changed).
#
# The modules are read from go.work, so a new module is covered as soon as it
# is added there. Everything runs with GOWORK=off: what counts is the module's
# own go.mod (its requirements and its replace directives to its siblings), not
# the workspace. It needs no network once the module cache holds what go.sum
# names (`go mod download all` in each module); it never adds -mod=mod.
#
# Usage: scripts/check-modules.sh [ROOT]   (ROOT: the directory holding go.work;
#        default: the repository this script lives in). Exit 0 when every
#        module passes; 1 after naming each module that failed and the fix.
set -uo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root" || exit 2
if [ ! -f go.work ]; then
	echo "check-modules: no go.work in $(pwd)" >&2
	exit 2
fi

start=$(date +%s)
failed=0
fail() { # module, message
	echo "check-modules: module $1: $2" >&2
	failed=1
}

# Module directories as go.work lists them, without the leading ./ ("." is the root).
mapfile -t modules < <(GOWORK="$PWD/go.work" go work edit -json |
	sed -n 's/^[[:space:]]*"DiskPath": "\(.*\)",\{0,1\}$/\1/p' | sed 's#^\./##; s#^$#.#')
if [ ${#modules[@]} -eq 0 ]; then
	echo "check-modules: go.work lists no modules" >&2
	exit 2
fi

# A go.mod the workspace does not list would be skipped by every check (and by
# `go test work`). testdata directories are not modules of ours.
while IFS= read -r gomod; do
	dir=$(dirname "$gomod")
	dir=${dir#./}
	listed=0
	for m in "${modules[@]}"; do [ "$m" = "$dir" ] && listed=1; done
	[ $listed = 1 ] || fail "$dir" "has a go.mod that go.work does not list: run \`go work use ./$dir\`"
done < <(find . -name go.mod -not -path '*/testdata/*' -not -path './bin/*' | sort)

for m in "${modules[@]}"; do
	if [ ! -f "$m/go.mod" ]; then
		fail "$m" "go.work lists it but $m/go.mod does not exist: add the module or run \`go work edit -dropuse=./$m\`"
		continue
	fi
	if ! out=$(cd "$m" && GOWORK=off go mod tidy -diff 2>&1); then
		fail "$m" "go.mod or go.sum is not tidy: run \`cd $m && go mod tidy\`
$out"
		continue
	fi
	for step in build vet test; do
		args=(./...)
		[ $step = test ] && args=(-run '^$' ./...)
		if ! out=$(cd "$m" && GOWORK=off go $step "${args[@]}" 2>&1); then
			fail "$m" "\`GOWORK=off go $step\` fails: the module must build from its own go.mod — require every sibling it imports at v0.0.0 with a replace to its directory, then run \`cd $m && go mod tidy\`
$out"
			break
		fi
	done
done

if [ $failed = 1 ]; then
	echo "check-modules: FAILED (${#modules[@]} modules, $(($(date +%s) - start))s)" >&2
	exit 1
fi
echo "check-modules: ${#modules[@]} modules tidy, each builds, vets and compiles its tests with GOWORK=off ($(($(date +%s) - start))s)"
