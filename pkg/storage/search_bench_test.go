package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// BenchmarkIndexCostPaired measures what the search index adds to a send's
// write transaction: each round writes one message with its index and one
// without, in alternating order, into the same store (a message's own
// Update, as acc message makes it), on each engine. It reports the median
// of each and their difference; the store starts with 1,000 messages.
//
//	go test -run '^$' -bench IndexCostPaired -benchtime 300x ./pkg/storage/
//
// (through scripts/with-pg.sh for the PostgreSQL half).
func BenchmarkIndexCostPaired(b *testing.B) {
	engines := []struct {
		name string
		open func(b *testing.B) Store
	}{
		{"sqlite", func(b *testing.B) Store {
			s, err := OpenSQLite(context.Background(), b.TempDir()+"/acc.db", testWorkspace)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"postgresql", func(b *testing.B) Store { return openTestPostgres(b) }},
	}
	for _, e := range engines {
		b.Run("engine="+e.name, func(b *testing.B) {
			s := e.open(b)
			fillMessages(b, s, 1000)
			ws := s.WorkspaceID()
			body := "Should we rotate the auth tokens before the refresh flow ships? The migration renames the table and the reports read it."
			var with, without []time.Duration
			write := func(i int, index bool) {
				m := fxMessage(ws, fmt.Sprintf("paired_%d_%v", i, index), "alice", []string{}, protocol.KindNote, i)
				m.Subject, m.Body = fmt.Sprintf("paired send %d", i), body
				began := time.Now()
				err := s.Update(context.Background(), func(tx Tx) error { return tx.(*sqlTx).insertMessage(m, index) })
				if err != nil {
					b.Fatal(err)
				}
				if index {
					with = append(with, time.Since(began))
				} else {
					without = append(without, time.Since(began))
				}
			}
			b.ResetTimer()
			for i := range b.N {
				write(i, i%2 == 0)
				write(i, i%2 != 0)
			}
			b.StopTimer()
			med := func(d []time.Duration) time.Duration {
				slices.Sort(d)
				return d[len(d)/2]
			}
			w, wo := med(with), med(without)
			b.ReportMetric(float64(w.Microseconds())/1000, "ms-indexed-p50")
			b.ReportMetric(float64(wo.Microseconds())/1000, "ms-unindexed-p50")
			b.ReportMetric(float64((w-wo).Microseconds())/1000, "ms-added-p50")
		})
	}
}
