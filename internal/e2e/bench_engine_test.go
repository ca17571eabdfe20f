package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkEnginePaired measures whole processes with the room in SQLite
// and with it on the PostgreSQL test server over loopback, alternately in
// one loop so both see the same machine and the same load: `acc message`
// to a peer; acc-hook's pre-tool call of a shell command in a room where
// ten peers hold guarded claims; and acc-hook's before-turn call with five
// new messages pending (sent in-process, untimed, before each turn).
// Metrics: sqlite-p50-ms, postgresql-p50-ms (and p90, minor faults), never
// asserted.
//
//	make bench, or: scripts/with-pg.sh go test -run '^$' -bench EnginePaired -benchtime 50x ./internal/e2e/
func BenchmarkEnginePaired(b *testing.B) {
	type engine struct {
		name string
		hb   *hookBench
	}
	engines := func(b *testing.B) []engine {
		return []engine{{"sqlite", newHookBenchIn(b, newSandbox(b))}, {"postgresql", newHookBenchIn(b, newSandboxPG(b))}}
	}
	report := func(b *testing.B, es []engine, ps []procSamples) {
		for j, e := range es {
			ps[j].report(b, e.name+"-")
		}
	}
	b.Run("op=message", func(b *testing.B) {
		es := engines(b)
		to := make([]session, len(es))
		from := make([]session, len(es))
		for j, e := range es {
			to[j] = e.hb.sb.attach(e.hb.repo, "recv", "cli")
			from[j] = e.hb.sb.attach(e.hb.repo, "sender", "cli")
		}
		ps := make([]procSamples, len(es))
		b.ResetTimer()
		for i := range b.N {
			for j, e := range es {
				ps[j].run(b, e.hb.sb, e.hb.repo, nil, accBin, append([]string{"message", "--to", to[j].ParticipantID,
					"--subject", fmt.Sprintf("bench %d", i), "--body", "a benchmark message"}, from[j].creds()...)...)
			}
		}
		b.StopTimer()
		report(b, es, ps)
	})
	b.Run("op=hook-pre-tool", func(b *testing.B) {
		es := engines(b)
		ps := make([]procSamples, len(es))
		b.ResetTimer()
		for range b.N {
			for j, e := range es {
				payload := e.hb.c.shellPayload(b, e.hb.sid, e.hb.repo, `cd src && sed -i 's/a/b/' main.go && go test ./... 2>&1 | tee ../test.log > /dev/null`)
				if out, _ := ps[j].run(b, e.hb.sb, e.hb.sb.base, payload, hookBin, e.hb.c.id, e.hb.c.tool); out != e.hb.c.allow {
					b.Fatalf("%s: the pre-tool call was not allowed: %s", e.name, out)
				}
			}
		}
		b.StopTimer()
		report(b, es, ps)
	})
	b.Run("op=hook-before-turn", func(b *testing.B) {
		es := engines(b)
		ps := make([]procSamples, len(es))
		for _, e := range es {
			if me, err := e.hb.room.HookCaller(context.Background(), e.hb.c.id, e.hb.sid); err != nil || me == nil {
				b.Fatalf("%s: the hooked session is not bound: %v", e.name, err)
			}
		}
		b.ResetTimer()
		for range b.N {
			for j, e := range es {
				b.StopTimer()
				e.hb.send(b, 5)
				b.StartTimer()
				out, _ := ps[j].run(b, e.hb.sb, e.hb.sb.base, e.hb.c.turnPayload(b, e.hb.sid, e.hb.repo), hookBin, e.hb.c.id, e.hb.c.turn)
				if !strings.Contains(out, "message_") {
					b.Fatalf("%s: the turn offered nothing:\n%s", e.name, clip(out, 1500))
				}
			}
		}
		b.StopTimer()
		report(b, es, ps)
	})
}
