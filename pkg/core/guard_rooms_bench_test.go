package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// BenchmarkCheckWriteRooms measures what judging targets in their own
// rooms adds to CheckWrite in a room holding 500 guarded claims of peers,
// in process: op=here is CheckWrite alone, op=rooms CheckWriteRooms on the
// same two targets in the caller's room (the ordinary case: one more
// directory discovered), op=other-room one target in a second room with
// a store (its discovery, its store opened, its claims read).
func BenchmarkCheckWriteRooms(b *testing.B) {
	tr := newTestRoom(b)
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(tr.dir, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		peer := tr.attach(fmt.Sprintf("peer%02d", i), "cli")
		for j := range 10 {
			if _, err := tr.Claim(ctx, ClaimInput{Caller: peer, Resource: fmt.Sprintf("file:src/m%d/f%d.go", i, j), Cwd: tr.dir,
				Enforcement: protocol.EnforcementGuarded}); err != nil {
				b.Fatal(err)
			}
		}
	}
	getenv := func(k string) string {
		return map[string]string{"ACC_DATA_HOME": tr.home, "HOME": filepath.Dir(tr.dir)}[k]
	}
	other := filepath.Join(filepath.Dir(tr.dir), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		b.Fatal(err)
	}
	o, err := Open(ctx, OpenOptions{Cwd: other, Getenv: getenv, GOOS: "linux"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := o.Attach(ctx, AttachInput{ParticipantID: "x", Harness: "cli"}); err != nil {
		b.Fatal(err)
	}
	o.Close()
	in := GuardInput{Cwd: filepath.Join(tr.dir, "src"), Targets: []string{"main.go", "../test.log"}}
	for _, v := range []struct {
		name string
		run  func() (*GuardDecision, error)
	}{
		{"op=here", func() (*GuardDecision, error) { return tr.CheckWrite(ctx, in) }},
		{"op=rooms", func() (*GuardDecision, error) {
			return CheckWriteRooms(ctx, tr.Room, RoomsInput{GuardInput: in, Adapter: "claude", ClientSessionID: "c", Getenv: getenv})
		}},
		{"op=other-room", func() (*GuardDecision, error) {
			in := in
			in.Targets = []string{"main.go", filepath.Join(other, "f")}
			return CheckWriteRooms(ctx, tr.Room, RoomsInput{GuardInput: in, Adapter: "claude", ClientSessionID: "c", Getenv: getenv})
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				d, err := v.run()
				if err != nil || d.Deny {
					b.Fatalf("%+v %v", d, err)
				}
			}
		})
	}
}
