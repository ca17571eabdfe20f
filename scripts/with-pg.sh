#!/usr/bin/env bash
# with-pg.sh CMD...: run CMD beside a throwaway PostgreSQL cluster, so the
# tests that put a room on PostgreSQL have a real server
# (docs/configuration.md#a-throwaway-server-for-tests). The cluster lives in a
# temporary directory and is removed when CMD ends, whatever its outcome.
#
# When ACC_TEST_PG_URL is already set, CMD runs against that server instead.
# When no cluster can be started, CMD runs without one and those tests skip,
# saying so — unless ACC_REQUIRE_PG=1 (CI sets it), which stops here.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -n "${ACC_TEST_PG_URL:-}" ]; then exec "$@"; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/acc-pg.XXXXXX")
trap 'scripts/pg-cluster.sh stop "$dir/cluster"; rm -rf "$dir"' EXIT
if env=$(scripts/pg-cluster.sh start "$dir/cluster"); then
	eval "$env"
	echo "postgres: throwaway cluster on ${ACC_TEST_PG_URL%%/acc\?*}"
elif [ "${ACC_REQUIRE_PG:-}" = 1 ]; then
	echo "postgres: no throwaway cluster could be started and ACC_REQUIRE_PG=1: stopping" >&2
	exit 1
else
	echo "postgres: WARNING: no throwaway cluster; the tests on PostgreSQL will skip (ACC_REQUIRE_PG=1 makes this an error)" >&2
fi
"$@"
