package core

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// BenchmarkProjectTenPeers200Pending measures Project with 10 peers and 200
// pending questions addressed to the caller (the before-turn hook's work,
// in process; the whole hook process adds start-up, discovery and the
// offer commit).
func BenchmarkProjectTenPeers200Pending(b *testing.B) {
	tr := newTestRoom(b)
	me := tr.attach("me", "claude")
	var peers []Caller
	for i := range 10 {
		peers = append(peers, tr.attach(fmt.Sprintf("peer%d", i), "codex"))
	}
	for i := range 200 {
		tr.send(peers[i%10], SendInput{To: []string{"me"}, Kind: protocol.KindQuestion, Subject: fmt.Sprintf("q %d", i), Body: strings.Repeat("body ", 60)})
	}
	b.ResetTimer()
	for range b.N {
		if _, err := tr.Project(context.Background(), me, ProjectionOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
