package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/storage"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startSDK serves one connection in this process, its calls reading the
// clock now (nil: the system clock), and connects the Go SDK's client to it.
func startSDK(t *testing.T, r *room, participant string, now func() time.Time) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	cfg := &Config{Participant: participant, Dir: r.ws, Getenv: r.getenv, Now: now}
	go func() { done <- Serve(context.Background(), cfg, inR, outW, io.Discard); outW.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "acc-test", Version: "0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return at the end of input")
		}
	})
	return cs
}

// callSDK calls a tool and returns its structured result; isErr says
// whether it was refused.
func callSDK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	var out map[string]any
	if b, err := json.Marshal(res.StructuredContent); err == nil {
		json.Unmarshal(b, &out)
	}
	return out, res.IsError
}

// storeRows fingerprints every row of the room's store.
func storeRows(t *testing.T, r *room) string {
	t.Helper()
	path := storeFile(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := storage.OpenSQLite(ctx, path, filepath.Base(filepath.Dir(path)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fp, err := st.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// Every tool advertises the annotations of what it does, as a client reads
// them from tools/list through the Go SDK: read-only for the views, never
// open-world, destructive where a call ends or replaces a record.
func TestToolAnnotationsOverSDK(t *testing.T) {
	cs := startSDK(t, newRoom(t), "mcp", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ readOnly, destructive, idempotent bool }
	want := map[string]hints{
		"acc_status":  {readOnly: true, idempotent: true},
		"acc_sync":    {readOnly: true, idempotent: true},
		"acc_search":  {readOnly: true, idempotent: true},
		"acc_work":    {destructive: true},
		"acc_claim":   {destructive: true},
		"acc_release": {destructive: true, idempotent: true},
		"acc_message": {},
		"acc_request": {},
		"acc_inbox":   {idempotent: true},
		"acc_reply":   {},
		"acc_ack":     {idempotent: true},
		"acc_finish":  {destructive: true},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("tools/list has %d tools, want %d", len(res.Tools), len(want))
	}
	for _, tl := range res.Tools {
		w, ok := want[tl.Name]
		a := tl.Annotations
		switch {
		case !ok:
			t.Errorf("%s: no expected annotations", tl.Name)
		case a == nil:
			t.Errorf("%s: no annotations", tl.Name)
		case a.OpenWorldHint == nil || *a.OpenWorldHint:
			t.Errorf("%s: openWorldHint %v, want false", tl.Name, a.OpenWorldHint)
		case a.DestructiveHint == nil:
			t.Errorf("%s: destructiveHint left out (it defaults to true)", tl.Name)
		default:
			got := hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint}
			if got != w {
				t.Errorf("%s: annotations %+v, want %+v", tl.Name, got, w)
			}
		}
	}
}

// resources/templates/list is answered with an empty list (acc-mcp has no
// templates), where it used to be -32601.
func TestResourceTemplatesEmptyOverSDK(t *testing.T) {
	cs := startSDK(t, newRoom(t), "mcp", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ResourceTemplates) != 0 || res.NextCursor != "" {
		t.Errorf("resource templates %v (next %q), want none", res.ResourceTemplates, res.NextCursor)
	}
}

// The annotations hold: with the clock held still (a call refreshes its
// session's heartbeat, the one write every call makes), a read-only tool
// leaves every row of the store as it was, whatever its arguments, and an
// idempotent one called a second time with the same arguments changes
// nothing its first call did not. The first exact read does change the
// store, so the fingerprint is seen to notice a receipt that moves.
func TestAnnotatedEffectsHold(t *testing.T) {
	r := newRoom(t)
	frozen := time.Now()
	cs := startSDK(t, r, "research", func() time.Time { return frozen })
	callSDK(t, cs, "acc_status", map[string]any{}) // attaches research
	peer := r.acc("attach", "--participant", "alice")
	as := []string{"--session", peer["sessionId"].(string), "--generation", peer["generation"].(string)}
	q := r.acc(append([]string{"message", "--to", "research", "--type", "question", "--subject", "q", "--body", "?"}, as...)...)
	qid := q["message"].(map[string]any)["messageId"].(string)
	dec := r.acc(append([]string{"message", "--to", "research", "--type", "decision", "--obligation", "acknowledge", "--subject", "use Go", "--body", "decided"}, as...)...)
	did := dec["message"].(map[string]any)["messageId"].(string)
	cl, isErr := callSDK(t, cs, "acc_claim", map[string]any{"action": "acquire", "resource": "file:a.txt"})
	if isErr {
		t.Fatalf("claim: %v", cl)
	}
	if _, isErr := callSDK(t, cs, "acc_work", map[string]any{"summary": "docs", "mode": "edit"}); isErr {
		t.Fatal("work refused")
	}

	reads := []struct {
		tool string
		args map[string]any
	}{
		{"acc_status", map[string]any{}},
		{"acc_sync", map[string]any{}},
		{"acc_sync", map[string]any{"scope": "full"}},
		{"acc_sync", map[string]any{"scope": "history"}},
		{"acc_sync", map[string]any{"scope": "history", "messageId": qid}},
		{"acc_search", map[string]any{"query": "qu*"}},
		{"acc_inbox", map[string]any{}}, // the summary page, which the docs call read-only
	}
	for _, c := range reads {
		before := storeRows(t, r)
		if out, isErr := callSDK(t, cs, c.tool, c.args); isErr {
			t.Fatalf("%s %v: %v", c.tool, c.args, out)
		}
		if after := storeRows(t, r); after != before {
			t.Errorf("read-only %s %v changed the store", c.tool, c.args)
		}
	}

	repeats := []struct {
		tool    string
		args    map[string]any
		changes bool // the first call is known to change the store
	}{
		{"acc_inbox", map[string]any{"messageId": qid}, true},
		{"acc_ack", map[string]any{"messageId": did}, true},
		{"acc_release", map[string]any{"claimId": cl["claimId"]}, true},
	}
	for _, c := range repeats {
		before := storeRows(t, r)
		if out, isErr := callSDK(t, cs, c.tool, c.args); isErr {
			t.Fatalf("%s %v: %v", c.tool, c.args, out)
		}
		first := storeRows(t, r)
		if c.changes && first == before {
			t.Errorf("%s %v: the first call changed nothing the fingerprint sees", c.tool, c.args)
		}
		callSDK(t, cs, c.tool, c.args) // refused or answered alike: the store is what counts
		if again := storeRows(t, r); again != first {
			t.Errorf("idempotent %s %v: the second call changed the store", c.tool, c.args)
		}
	}
}
