package realclient

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A TUI is one real client running interactively, as a person runs it, in
// a terminal of its own tmux server (docs/real-clients.md#acc-on-the-real-clients,
// TestLivePush).
// Only tmux's own socket is shared with the test: the client's whole
// environment is Setup.Environ, with a terminal type a TUI can draw on.
type TUI struct {
	setup  Setup
	socket string // tmux -S
	log    string // the client's stderr, when it writes one
}

// InteractiveArgv is the client's interactive command line: no prompt, the
// client waits for one. Claude Code runs as root here, so it cannot bypass
// permission prompts; none of the live-push turns use a tool.
func (s Setup) InteractiveArgv() []string {
	switch s.Client.Name {
	case "claude":
		return append([]string{s.Exe}, s.Args...)
	case "codex":
		return append([]string{s.Exe, "--dangerously-bypass-hook-trust", "-s", "danger-full-access"}, s.Args...)
	case "qwen":
		// The fake model as an OpenAI-compatible provider, and no
		// approval mode that asks a model whether a tool call is safe.
		return append([]string{s.Exe, "--auth-type", "openai", "--approval-mode", "yolo"}, s.Args...)
	}
	return append([]string{s.Exe}, s.Args...)
}

// SeedInteractive writes what a person's first interactive run would have
// settled: Claude Code's onboarding, the fake key approved and the
// directory trusted; Codex's trust of the directory.
func (s Setup) SeedInteractive() error {
	switch s.Client.Name {
	case "claude":
		key := FakeAPIKey
		if len(key) > 20 {
			key = key[len(key)-20:]
		}
		return writeJSONFile(filepath.Join(s.Home, ".claude.json"), map[string]any{
			"hasCompletedOnboarding": true, "theme": "dark",
			"customApiKeyResponses": map[string]any{"approved": []string{key}, "rejected": []string{}},
			"projects":              map[string]any{s.Dir: map[string]any{"hasTrustDialogAccepted": true}},
		})
	case "codex":
		path := filepath.Join(s.Home, ".codex", "config.toml")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = fmt.Fprintf(f, "\n\n[projects.%q]\ntrust_level = \"trusted\"\n", s.Dir)
		return err
	}
	return nil
}

// StartTUI starts the client interactively in a new tmux server whose
// socket is inside Home, 200×50 cells, in Dir.
func (s Setup) StartTUI(ctx context.Context) (*TUI, error) {
	u := &TUI{setup: s, socket: filepath.Join(s.Home, "tmux.sock"), log: filepath.Join(s.Home, "tui-stderr.log")}
	env := s.Environ()
	for i, kv := range env {
		if strings.HasPrefix(kv, "TERM=") || strings.HasPrefix(kv, "NO_COLOR=") {
			env[i] = "ACC_UNUSED=1"
		}
	}
	var script strings.Builder
	script.WriteString("#!/bin/sh\ncd " + ShellQuote(s.Dir) + " || exit 1\n")
	var argv []string
	for _, a := range s.InteractiveArgv() {
		argv = append(argv, ShellQuote(a))
	}
	script.WriteString("exec " + strings.Join(argv, " ") + " 2>>" + ShellQuote(u.log) + "\n")
	launcher := filepath.Join(s.Home, "tui-launch.sh")
	if err := os.WriteFile(launcher, []byte(script.String()), 0o755); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "tmux", "-S", u.socket, "-f", "/dev/null", "new-session", "-d", "-s", "acc", "-x", "200", "-y", "50", launcher)
	cmd.Env = append(env, "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tmux new-session: %v\n%s", err, out)
	}
	return u, nil
}

func (u *TUI) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", u.socket}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Screen is the terminal's visible text now.
func (u *TUI) Screen() string {
	out, err := u.tmux("capture-pane", "-p", "-t", "acc")
	if err != nil {
		return err.Error()
	}
	return out
}

// Keys types keys into the terminal (tmux send-keys names: Enter, Escape…).
func (u *TUI) Keys(keys ...string) error {
	_, err := u.tmux(append([]string{"send-keys", "-t", "acc"}, keys...)...)
	return err
}

// Type types text literally, then Enter.
func (u *TUI) Type(text string) error {
	if _, err := u.tmux("send-keys", "-t", "acc", "-l", text); err != nil {
		return err
	}
	time.Sleep(200 * time.Millisecond)
	return u.Keys("Enter")
}

// PID is the pid of the client process the terminal runs (0 when it has
// exited).
func (u *TUI) PID() int {
	out, err := u.tmux("display-message", "-p", "-t", "acc", "#{pane_pid}")
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out))
	return pid
}

// WaitScreen polls the screen until ok says yes or within passes; it
// returns the last screen and whether ok said yes.
func (u *TUI) WaitScreen(within time.Duration, ok func(screen string) bool) (string, bool) {
	deadline := time.Now().Add(within)
	for {
		s := u.Screen()
		if ok(s) {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stderr is what the client wrote to its standard error.
func (u *TUI) Stderr() string {
	b, _ := os.ReadFile(u.log)
	return string(b)
}

// Close ends the client and its tmux server.
func (u *TUI) Close() {
	_, _ = u.tmux("kill-server")
}
