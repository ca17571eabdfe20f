package core

import (
	"context"
	"fmt"
	"testing"
)

// benchRoom is a room of 50 live sessions holding 500 claims.
func benchRoom(b *testing.B) (*testRoom, []Caller) {
	tr := newTestRoom(b)
	var callers []Caller
	for i := range 50 {
		callers = append(callers, tr.attach(fmt.Sprintf("p%02d", i), "cli"))
	}
	for i := range 500 {
		if _, err := tr.Claim(context.Background(), ClaimInput{Caller: callers[i%50], Resource: fmt.Sprintf("file:src/%d/a.go", i), Cwd: tr.dir}); err != nil {
			b.Fatal(err)
		}
	}
	return tr, callers
}

// BenchmarkStatusWith50SessionsAnd500Claims measures Room.Status in
// process, with its caller's attention.
func BenchmarkStatusWith50SessionsAnd500Claims(b *testing.B) {
	tr, callers := benchRoom(b)
	me := callers[0]
	b.ResetTimer()
	for range b.N {
		if _, err := tr.Status(context.Background(), StatusQuery{Caller: &me}); err != nil {
			b.Fatal(err)
		}
	}
}
