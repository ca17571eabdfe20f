#!/usr/bin/env bash
# Install the pinned real AI coding clients that acc's real-client tests run
# (internal/realclient), from the npm registry, into a cache outside the clone:
#
#   ${ACC_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acc-clients}/<name>@<version>
#
# A complete install is reused. A new one goes into a temporary directory, is
# checked by running the client with --version, and is then renamed into
# place, so the cache never holds a half-made install. Install scripts are
# skipped (--ignore-scripts): Claude Code's only copies its native binary out of
# the platform package npm already fetched, and the tests run that binary
# directly. The versions must match internal/realclient/clients.go (a test
# checks).
#
# It also installs the official TypeScript MCP SDK, a library rather than a
# program, that internal/mcpserver's real-client test drives acc-mcp with; its
# pin must match sdkVersion there (a test checks).
#
# Kimi Code needs Node >= 22.19 (its program is a Node script run by the
# first node on PATH): it is installed, and checked, with the pinned Node 22
# below first on PATH, so Node is installed before it.
#
# And it installs Node 22 (npm's platform package of the node binary) and the
# MCP Inspector, installed with that node first on PATH, whose CLI mode
# internal/mcpserver's TestInspectorCLI runs against acc-mcp; the pins must
# match nodeVersion and inspectorVersion there (TestInspectorPinAgrees).
#
# Usage: scripts/install-clients.sh [name...]
#        (default: all of them, mcp-sdk, the ACP agents, node and inspector)
set -euo pipefail

# name  npm package  exact version
CLIENTS=(
	"claude @anthropic-ai/claude-code 2.1.332"
	"codex @openai/codex 0.171.0"
	"gemini @google/gemini-cli 0.61.0"
	"kimi @moonshot-ai/kimi-code 2.1.0"
	"copilot @github/copilot 1.0.102"
	"qwen @qwen-code/qwen-code 0.24.4"
	"opencode opencode-ai 1.18.33"
	"pi @mariozechner/pi-coding-agent 0.73.1"
	"droid @factory/cli-linux-x64 0.225.2"
	"kilo @kilocode/cli-linux-x64 7.7.9"
)

# Droid's npm launcher, a Node script, exists only as 0.225.1; the program
# the tests run is its platform package's native binary, the pin above.
# Both are installed, as the launcher would have npm do.
DROID_LAUNCHER="@factory/cli@0.225.1"

# Kilo Code's launcher stops at 7.7.7 while its program, the pin above, is
# 7.7.9; the launcher goes beside it without its optional dependency on the
# 7.7.7 program (227 MB), which nothing runs.
KILO_LAUNCHER="@kilocode/cli@7.7.7"

# name:package:exact version of the MCP SDK.
MCP_SDK="mcp-sdk:@modelcontextprotocol/sdk:1.32.2"

# name:exact version of Node (the package is node-<os>-<arch>), and
# name:package:exact version of the MCP Inspector.
NODE="node:22.23.5"
INSPECTOR="inspector:@modelcontextprotocol/inspector:2.12.0"

# name:package:exact version of the ACP agents acc acp is tested with
# (internal/realclient acp.go; Gemini CLI, above, is the third, run with
# --acp). claude-agent-acp asks for Node 22 and runs on the one installed
# below; npm installs it under any Node.
ACP_AGENTS=(
	"acp-claude:@agentclientprotocol/claude-agent-acp:0.101.0"
	"acp-codex:@agentclientprotocol/codex-acp:2.6.0"
)

cache="${ACC_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/acc-clients}"
command -v npm >/dev/null || { echo "install-clients: npm is not on PATH" >&2; exit 1; }
mkdir -p "$cache"

# executable prints the client's program inside an install directory.
executable() {
	local name=$1 dir=$2 f
	case $name in
	claude)
		for f in "$dir"/node_modules/@anthropic-ai/claude-code-linux-*/claude; do
			case $f in *musl*) continue ;; esac
			[ -x "$f" ] && { echo "$f"; return; }
		done
		for f in "$dir"/node_modules/@anthropic-ai/claude-code-linux-*musl/claude; do
			[ -x "$f" ] && { echo "$f"; return; }
		done
		;;
	codex | gemini | kimi | qwen | opencode | pi)
		f="$dir/node_modules/.bin/$name"
		[ -x "$f" ] && { echo "$f"; return; }
		;;
	droid)
		f="$dir/node_modules/@factory/cli-linux-x64/bin/droid"
		[ -x "$f" ] && { echo "$f"; return; }
		;;
	kilo)
		f="$dir/node_modules/@kilocode/cli-linux-x64/bin/kilo"
		[ -x "$f" ] && { echo "$f"; return; }
		;;
	copilot)
		# The native binary of the platform package npm fetched.
		for f in "$dir"/node_modules/@github/copilot-linux-*/copilot; do
			[ -x "$f" ] && { echo "$f"; return; }
		done
		;;
	esac
	return 1
}

# install_one runs in a subshell so its EXIT trap removes a failed install.
install_one() (
	name=$1 pkg=$2 version=$3
	dir="$cache/$name@$version"
	if [ -f "$dir/.acc-installed" ] && executable "$name" "$dir" >/dev/null; then
		echo "install-clients: $pkg@$version already in $dir"
		exit 0
	fi
	# A directory without the mark is not an install; partial ones older
	# than an hour were left by a killed run.
	rm -rf "$dir"
	find "$cache" -maxdepth 1 -name "$name@$version.partial-*" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
	start=$(date +%s)
	tmp=$(mktemp -d "$cache/$name@$version.partial-XXXXXX")
	home=$(mktemp -d)
	trap 'rm -rf "$tmp" "$home"' EXIT
	# OpenCode's install script links its native binary over the stub its
	# bin names; every other client runs without install scripts.
	scripts=--ignore-scripts
	[ "$name" = opencode ] && scripts=
	specs="$pkg@$version"
	[ "$name" = droid ] && specs="$DROID_LAUNCHER $specs"
	[ "$name" = kilo ] && specs="--omit=optional $KILO_LAUNCHER $specs"
	npm install --prefix "$tmp" --no-audit --no-fund $scripts --save-exact --loglevel=error $specs >&2
	exe=$(executable "$name" "$tmp") || { echo "install-clients: $pkg@$version installed no runnable program" >&2; exit 1; }
	# Copilot CLI unpacks its program (235 MB) under $HOME/.cache on a
	# first run: its check runs in a HOME inside the install, kept, which
	# the tests point every run at (COPILOT_CLI_DIST_DIR).
	if [ "$name" = copilot ]; then
		rm -rf "$home"
		home="$tmp/copilot-home"
		mkdir -p "$home"
	fi
	out=$(cd "$home" && HOME=$home COPILOT_AUTO_UPDATE=false CODEX_HOME=$home/.codex KIMI_CODE_HOME=$home/.kimi-code KIMI_CODE_NO_AUTO_UPDATE=1 KIMI_DISABLE_TELEMETRY=1 "$exe" --version 2>&1) || {
		echo "install-clients: $exe --version failed: $out" >&2
		exit 1
	}
	case $out in *"$version"*) ;; *)
		echo "install-clients: $exe --version printed '$out', not $version" >&2
		exit 1
		;;
	esac
	echo "$pkg@$version" >"$tmp/.acc-installed"
	if ! mv -T "$tmp" "$dir" 2>/dev/null && [ ! -f "$dir/.acc-installed" ]; then
		echo "install-clients: cannot move the install into $dir" >&2
		exit 1
	fi
	echo "install-clients: $pkg@$version installed in $dir in $(($(date +%s) - start))s"
)

want=("$@")

# install_library installs an npm library (nothing to run): it is checked by
# the version in its package.json instead.
# A fourth argument "scripts" lets the package's install scripts run.
install_library() (
	name=$1 pkg=$2 version=$3 scripts=--ignore-scripts
	[ "${4:-}" = scripts ] && scripts=
	dir="$cache/$name@$version"
	if [ -f "$dir/.acc-installed" ]; then
		echo "install-clients: $pkg@$version already in $dir"
		exit 0
	fi
	rm -rf "$dir"
	find "$cache" -maxdepth 1 -name "$name@$version.partial-*" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
	tmp=$(mktemp -d "$cache/$name@$version.partial-XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	npm install --prefix "$tmp" --no-audit --no-fund $scripts --save-exact --loglevel=error "$pkg@$version" >&2
	got=$(node -p 'require(process.argv[1]).version' "$tmp/node_modules/$pkg/package.json" 2>/dev/null) || got=""
	[ "$got" = "$version" ] || { echo "install-clients: $pkg installed '$got', not $version" >&2; exit 1; }
	echo "$pkg@$version" >"$tmp/.acc-installed"
	if ! mv -T "$tmp" "$dir" 2>/dev/null && [ ! -f "$dir/.acc-installed" ]; then
		echo "install-clients: cannot move the install into $dir" >&2
		exit 1
	fi
	echo "install-clients: $pkg@$version installed in $dir"
)

# node_pkg names npm's platform package of the node binary.
node_pkg() {
	local os arch
	case $(uname -s) in Linux) os=linux ;; Darwin) os=darwin ;; *) return 1 ;; esac
	case $(uname -m) in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) return 1 ;; esac
	echo "node-$os-$arch"
}

# install_node installs the node binary's platform package; it is checked by
# running node --version.
install_node() (
	name=$1 pkg=$2 version=$3
	dir="$cache/$name@$version"
	if [ -f "$dir/.acc-installed" ] && [ "$("$dir/node_modules/$pkg/bin/node" --version 2>/dev/null)" = "v$version" ]; then
		echo "install-clients: $pkg@$version already in $dir"
		exit 0
	fi
	rm -rf "$dir"
	find "$cache" -maxdepth 1 -name "$name@$version.partial-*" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
	tmp=$(mktemp -d "$cache/$name@$version.partial-XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --save-exact --loglevel=error "$pkg@$version" >&2
	got=$("$tmp/node_modules/$pkg/bin/node" --version 2>&1) || got=""
	[ "$got" = "v$version" ] || { echo "install-clients: $pkg node --version printed '$got', not v$version" >&2; exit 1; }
	echo "$name@$version" >"$tmp/.acc-installed"
	if ! mv -T "$tmp" "$dir" 2>/dev/null && [ ! -f "$dir/.acc-installed" ]; then
		echo "install-clients: cannot move the install into $dir" >&2
		exit 1
	fi
	echo "install-clients: $pkg@$version installed in $dir"
)

IFS=: read -r node_name node_version <<<"$NODE"
IFS=: read -r insp_name insp_pkg insp_version <<<"$INSPECTOR"
node_bin=""
want_node=0 want_insp=0
if [ ${#want[@]} -eq 0 ] || [[ " ${want[*]} " == *" $node_name "* ]] || [[ " ${want[*]} " == *" kimi "* ]]; then want_node=1; fi
if [ ${#want[@]} -eq 0 ] || [[ " ${want[*]} " == *" $insp_name "* ]]; then want_node=1 want_insp=1; fi
if [ $want_node = 1 ]; then
	pkg=$(node_pkg) || { echo "install-clients: no node platform package for $(uname -sm)" >&2; exit 1; }
	install_node "$node_name" "$pkg" "$node_version"
	node_bin="$cache/$node_name@$node_version/node_modules/$pkg/bin"
fi

for line in "${CLIENTS[@]}"; do
	read -r name pkg version <<<"$line"
	if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $name "* ]]; then
		continue
	fi
	if [ "$name" = kimi ]; then
		# Kimi Code's --version check runs on the pinned Node.
		PATH="$node_bin:$PATH" install_one "$name" "$pkg" "$version"
	else
		install_one "$name" "$pkg" "$version"
	fi
done

IFS=: read -r name pkg version <<<"$MCP_SDK"
if [ ${#want[@]} -eq 0 ] || [[ " ${want[*]} " == *" $name "* ]]; then
	install_library "$name" "$pkg" "$version"
fi

for line in "${ACP_AGENTS[@]}"; do
	IFS=: read -r name pkg version <<<"$line"
	if [ ${#want[@]} -eq 0 ] || [[ " ${want[*]} " == *" $name "* ]]; then
		install_library "$name" "$pkg" "$version"
	fi
done

if [ $want_insp = 1 ]; then
	# The Inspector needs Node 22: install it (its scripts run, as in
	# TestInspectorCLI) with that node first on PATH; install_library checks
	# it by its package.json.
	PATH="$node_bin:$PATH" \
		install_library "$insp_name" "$insp_pkg" "$insp_version" scripts
fi
