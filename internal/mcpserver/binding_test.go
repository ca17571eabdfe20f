package mcpserver

import (
	"syscall"
	"testing"
	"time"
)

// presenceOf returns the presence acc status shows for a session, or "" when
// the session is not listed (acc status --all).
func presenceOf(r *room, sessionID string) string {
	st := r.acc("status", "--all")
	for _, p := range st["participants"].([]any) {
		if m := p.(map[string]any); m["sessionId"] == sessionID {
			return m["presence"].(string)
		}
	}
	return ""
}

// TestRestartResumesSession: the binding is keyed by mcp, the participant
// and the workspace (docs/mcp.md#sessions), so a server started after a crash, with another
// clientInfo, resumes the same session; the crashed server's recorded pid
// makes that session offline while no server is running.
func TestRestartResumesSession(t *testing.T) {
	r := newRoom(t)
	c1, p1 := spawnBinary(t, r, "research")
	c1.initialize("2025-11-25")
	first := c1.ok("acc_status", map[string]any{})["callerSessionId"].(string)
	if got := presenceOf(r, first); got != "online" {
		t.Fatalf("presence while the server runs: %q", got)
	}
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p1.cmd.Wait()
	if got := presenceOf(r, first); got != "offline" {
		t.Errorf("presence after kill -9 of the server: %q, want offline", got)
	}

	c2, p2 := spawnBinary(t, r, "research")
	c2.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "another_client", "version": "9"}})
	c2.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	second := c2.ok("acc_status", map[string]any{})["callerSessionId"].(string)
	if second != first {
		t.Errorf("restart: session %s, want the bound %s", second, first)
	}
	if got := presenceOf(r, second); got != "online" {
		t.Errorf("presence after the restart: %q", got)
	}
	// The end of input leaves the session open but offline (the server's
	// pid is gone), and the next server resumes it: a clean restart is a
	// restart too (docs/mcp.md#sessions, docs/mcp.md#conformance item 7).
	p2.in.Close()
	done := make(chan error, 1)
	go func() { done <- p2.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("acc-mcp exit: %v; %s", err, p2.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("acc-mcp did not exit at the end of input")
	}
	if got := presenceOf(r, first); got != "offline" {
		t.Errorf("presence after the end of input: %q, want offline", got)
	}
	c3 := startBinary(t, r, "research")
	c3.initialize("2025-11-25")
	if third := c3.ok("acc_status", map[string]any{})["callerSessionId"].(string); third != first {
		t.Errorf("after a clean restart: session %s, want the bound %s", third, first)
	}
	// acc_finish ends it; the next call opens a new one.
	c3.ok("acc_finish", map[string]any{"goal": "done"})
	if fourth := c3.ok("acc_status", map[string]any{})["callerSessionId"].(string); fourth == first {
		t.Errorf("a finished session was resumed: %s", fourth)
	}
}
