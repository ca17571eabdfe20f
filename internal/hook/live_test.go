package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
)

// claudeChannel gives the world's Claude Code sessions an inbox socket and
// the session record Claude Code keeps for this process and session sid.
func (w *world) claudeChannel(sid string) string {
	w.t.Helper()
	dir, err := os.MkdirTemp("", "cc-socks-")
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, fmt.Sprintf("%d.sock", os.Getpid()))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { ln.Close() })
	os.Chmod(sock, 0o600)
	rec := filepath.Join(w.env["HOME"], ".claude", "sessions", fmt.Sprintf("%d.json", os.Getpid()))
	os.MkdirAll(filepath.Dir(rec), 0o700)
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "sessionId": sid, "messagingSocketPath": sock, "kind": "interactive"})
	if err := os.WriteFile(rec, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
	w.env["CLAUDE_CODE_MESSAGING_SOCKET"] = sock
	w.r.ClientPID = func(adapter.Adapter) int { return os.Getpid() }
	return sock
}

// TestHookBindsTheLiveChannel: a Claude Code session whose hook
// environment names a channel that checks out gets a live binding at
// session start; a session started without one has it retired.
func TestHookBindsTheLiveChannel(t *testing.T) {
	w := newWorld(t)
	w.claudeChannel("cc-1")
	if res := w.hook("claude", "SessionStart", "cc-1"); res.code != 0 {
		t.Fatalf("SessionStart: %+v", res)
	}
	r := w.room()
	me, _ := r.HookCaller(context.Background(), "claude", "cc-1")
	if ok, err := r.LiveBound(context.Background(), me.SessionID); !ok || err != nil {
		t.Fatalf("no live binding after session start (%v)", err)
	}
	// The same session started again (a resumed process) without the
	// channel in its environment: the binding goes.
	delete(w.env, "CLAUDE_CODE_MESSAGING_SOCKET")
	if res := w.hook("claude", "SessionStart", "cc-1"); res.code != 0 {
		t.Fatalf("SessionStart: %+v", res)
	}
	if ok, _ := w.room().LiveBound(context.Background(), me.SessionID); ok {
		t.Error("the binding outlived the channel")
	}
}

// TestHookSeesThePushedFrame: the before-turn hook of a turn a push
// started (the prompt is acc's frame) does not project the message again
// and records it offered; a typed prompt quoting only part of it changes
// nothing.
func TestHookSeesThePushedFrame(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	me, id := w.pendingQuestion("claude", "cc-1")
	prompt := func(sid, p string) ran {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": sid, "cwd": w.repo, "prompt": p})
		return w.run(&bytes.Buffer{}, []string{"claude", "UserPromptSubmit"}, b)
	}
	res := prompt("cc-1", "please look at messageId: "+id)
	if !strings.Contains(res.stdout, "is src/a.go yours?") || w.receiptState(me, id) != protocol.ReceiptOffered {
		t.Fatalf("a typed prompt naming the id: the message must be projected and offered as usual: %+v", res)
	}
	// Another session, and a turn started by the push of a question to it.
	if res := w.hook("claude", "SessionStart", "cc-2"); res.code != 0 {
		t.Fatalf("SessionStart: %+v", res)
	}
	r := w.room()
	me2, _ := r.HookCaller(ctx, "claude", "cc-2")
	peer, err := r.Attach(ctx, core.AttachInput{ParticipantID: "peer2", Harness: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := r.Send(ctx, core.SendInput{Caller: core.Caller{SessionID: peer.SessionID, Generation: peer.Generation},
		To: []string{core.DefaultHookParticipant("claude", "cc-2")}, Kind: protocol.KindQuestion, Subject: "q", Body: "and src/b.go?"})
	if err != nil {
		t.Fatal(err)
	}
	res = prompt("cc-2", "Another Claude session sent a message:\n"+core.LiveFrame(&sent.Message)+"\n\nThis came from another Claude session")
	if res.code != 0 || strings.Contains(res.stdout, "and src/b.go?") {
		t.Errorf("the pushed message was projected again: %+v", res)
	}
	if got := w.receiptState(*me2, sent.Message.MessageID); got != protocol.ReceiptOffered {
		t.Errorf("receipt after the pushed turn: %s, want offered", got)
	}
}
