package evidence_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// TestLocalRecordWins: a record made here decides its exact version —
// what it proves and what it does not — while other versions keep the
// built-in evidence.
func TestLocalRecordWins(t *testing.T) {
	home := t.TempDir()
	claude := clients.Get("claude")
	builtIn, _ := adapter.CapabilitiesFor(claude, "2.1.332")
	if !builtIn.Guarded() {
		t.Fatal("the built-in evidence of Claude Code 2.1.332 no longer proves the guard; this test needs one that does")
	}
	r := evidence.Record{Why: map[string]string{"guardShell": "the shell wrote the claimed file"}}
	r.Version, r.Recorded, r.Test = "2.1.332", "2026-11-30T10:00:00Z", "acc certify --adapter claude"
	r.Proven = adapter.Capabilities{Attach: true, NextTurn: true, GuardFiles: true, SessionEnd: true}
	path, err := evidence.Write(home, "claude", r)
	if err != nil || path != filepath.Join(home, "acc", "evidence", "claude", "2.1.332.json") {
		t.Fatalf("Write: %q %v", path, err)
	}
	caps, ev, local := evidence.For(claude, "2.1.332", home)
	if local == nil || caps.GuardShell || caps.Guarded() || ev == nil || ev.Version != "2.1.332" || !local.Local {
		t.Errorf("with a local record that did not prove the shell guard: %+v %+v %+v", caps, ev, local)
	}
	// acc certify does not measure live push: a record without a reason
	// for it keeps what the built-in evidence proves; one that measured it
	// decides.
	if caps.LivePush != builtIn.LivePush || !builtIn.LivePush {
		t.Errorf("live push %v with a certify record, built-in %v", caps.LivePush, builtIn.LivePush)
	}
	r.Why["livePush"] = "the session did not start a turn"
	if _, err := evidence.Write(home, "claude", r); err != nil {
		t.Fatal(err)
	}
	if caps, _, _ := evidence.For(claude, "2.1.332", home); caps.LivePush {
		t.Error("a record that measured live push as not working is overridden")
	}
	if caps, _, local := evidence.For(claude, "2.1.400", home); local != nil || caps != builtIn {
		t.Errorf("another version: %+v %+v, want the built-in %+v", caps, local, builtIn)
	}
	if caps, _, local := evidence.For(claude, "2.1.332", t.TempDir()); local != nil || caps != builtIn {
		t.Errorf("no record: %+v %+v", caps, local)
	}
}

// TestBadRecord: a record that does not decode is an error naming its
// file, and For then falls back to the built-in evidence.
func TestBadRecord(t *testing.T) {
	home := t.TempDir()
	p := evidence.Path(home, "codex", "0.171.0")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"version":"0.171.0","proven":{},"bogus":1}`), 0o644)
	if _, err := evidence.Read(home, "codex", "0.171.0"); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("Read of a bad record: %v", err)
	}
	codex := clients.Get("codex")
	builtIn, _ := adapter.CapabilitiesFor(codex, "0.171.0")
	if caps, _, local := evidence.For(codex, "0.171.0", home); local != nil || caps != builtIn {
		t.Errorf("a bad record must not count: %+v %+v", caps, local)
	}
}
