// Package pgtest gives tests of every module the PostgreSQL test server
// scripts/with-pg.sh starts (docs/configuration.md#a-throwaway-server-for-tests).
package pgtest

import (
	"os"
	"testing"
)

// URL returns the test server's URL, ACC_TEST_PG_URL. Without one the
// test skips, or fails when ACC_REQUIRE_PG=1 (CI), so a PostgreSQL half
// is never skipped silently there.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("ACC_TEST_PG_URL")
	if u == "" {
		if os.Getenv("ACC_REQUIRE_PG") == "1" {
			t.Fatal("ACC_TEST_PG_URL is empty and ACC_REQUIRE_PG=1: run the tests through scripts/with-pg.sh (make test does)")
		}
		t.Skip("no PostgreSQL server: ACC_TEST_PG_URL is empty (make test starts one through scripts/with-pg.sh)")
	}
	return u
}
