package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMainJob plays the README's first command against a freshly built acc
// and checks the receipt states it observed at each step.
func TestMainJob(t *testing.T) {
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "github.com/acc-go/acc/cmd/acc")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	var out bytes.Buffer
	tr, err := Play(Options{BinDir: bin, Out: &out})
	t.Log(out.String())
	if err != nil {
		t.Fatalf("main job failed: %v", err)
	}
	want := map[string]string{"sent": "queued", "listed": "queued", "read": "retrieved", "replied": "acknowledged",
		"answer read": "retrieved", "handoff": "acknowledged"}
	for step, st := range want {
		if tr.States[step] != st {
			t.Errorf("at %q the receipt was %q, want %q", step, tr.States[step], st)
		}
	}
	for _, id := range []string{tr.Question, tr.Answer, tr.Handoff} {
		if !strings.HasPrefix(id, "message_") || !strings.Contains(out.String(), id) {
			t.Errorf("message id %q missing from the narration", id)
		}
	}
	// The delivery is told in words a newcomer reads, not as codes.
	if !strings.Contains(out.String(), "queued for claude, a terminal session (attached with acc attach), so it reads it with acc inbox") ||
		strings.Contains(out.String(), "unsupported_client_version") {
		t.Errorf("the question's delivery is not narrated in plain words:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(bin, "acc")); err != nil {
		t.Fatal(err)
	}
}
