package e2e

import (
	"strings"
	"testing"
)

// BenchmarkSearchProcess measures a whole `acc search --json` process (the
// first page: at most 20 hits within 12,000 bytes) on a room of 100,000
// messages, on SQLite and on the PostgreSQL test server, for a query that
// finds one message (its number), one that finds 1,000 (topic42) and one
// that finds all 100,000 (benchmark, in every body), so every hit is
// ranked before the first page is cut.
//
//	scripts/with-pg.sh go test -run '^$' -bench SearchProcess -benchtime 30x ./internal/e2e/
func BenchmarkSearchProcess(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgresql"} {
		for _, q := range []struct{ name, query string }{
			{"hits=1", "77777"},
			{"hits=1000", "topic42"},
			{"hits=100000", "benchmark"},
		} {
			b.Run("engine="+engine+"/messages=100000/"+q.name, func(b *testing.B) {
				room := cachedRoom(b, 100000)
				if engine == "postgresql" {
					room = roomOnPostgres(b, room, 100000)
				}
				args := []string{"search", "--json", q.query}
				var s samples
				b.ResetTimer()
				for range b.N {
					s.timeProcess(b, room.sb, room.recv.dir, args...)
				}
				b.StopTimer()
				res := room.sb.run(room.recv.dir, args...)
				if res.code != 0 || !strings.Contains(res.stdout, `"items": [`) || strings.Contains(res.stdout, `"items": []`) {
					b.Fatalf("%q: exit %d, found nothing: %s%s", q.query, res.code, clip(res.stdout, 400), clip(res.stderr, 400))
				}
				s.report(b)
			})
		}
	}
}
