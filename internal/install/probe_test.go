package install

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// rendezvousEnv is an Env whose every installable client is a program that
// says its version only once every one of them has been asked: clients
// asked one after the other never answer, clients asked at once answer
// at once.
func rendezvousEnv(t *testing.T) *Env {
	t.Helper()
	adapters := map[string]adapter.Installer{}
	for id, a := range clients.All() {
		if in, ok := a.(adapter.Installer); ok {
			adapters[id] = in
		}
	}
	bin, marks := t.TempDir(), t.TempDir()
	for _, a := range adapters {
		script := fmt.Sprintf(`#!/bin/sh
touch %[1]s/%[2]s
while [ "$(ls %[1]s | wc -l)" -lt %[3]d ]; do sleep 0.05; done
echo '%[2]s 1.2.3'
`, marks, a.Binary(), len(adapters))
		if err := os.WriteFile(filepath.Join(bin, a.Binary()), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &Env{DataHome: t.TempDir(), Home: t.TempDir(), HomeGiven: true, Getenv: func(string) string { return "" },
		LookPath: func(name string) (string, error) {
			p := filepath.Join(bin, name)
			if _, err := os.Stat(p); err != nil {
				return "", exec.ErrNotFound
			}
			return p, nil
		},
		HookBinary: "/bin/true", MCPBinary: "/bin/true", AccVersion: "0.0.0-test", Adapters: adapters,
		// Generous: asked at once, every client answers as soon as the
		// last one has started.
		ProbeTimeout: 30 * time.Second}
}

// TestClientsAreAskedAtOnce: acc doctor (Clients) and acc install ask
// every client for its version at the same time, so that the clients'
// bounds do not add up: the worst case is two bounds, not two per client
// (docs/configuration.md).
func TestClientsAreAskedAtOnce(t *testing.T) {
	e := rendezvousEnv(t)
	start := time.Now()
	clients, err := e.Clients(context.Background())
	t.Logf("doctor's clients took %v", time.Since(start))
	if err != nil {
		t.Fatal(err)
	}
	if len(clients) != len(e.Adapters) {
		t.Fatalf("%d clients, want %d", len(clients), len(e.Adapters))
	}
	for _, c := range clients {
		if c.Version != "1.2.3" {
			t.Errorf("%s: version %q (%s), want 1.2.3: the clients were not asked at once", c.Adapter, c.Version, c.VersionUnknown)
		}
	}

	e = rendezvousEnv(t)
	start = time.Now()
	rep, err := e.Install(context.Background(), Options{DryRun: true})
	t.Logf("install's detection took %v", time.Since(start))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Clients) != len(e.Adapters) {
		t.Fatalf("%d clients, want %d", len(rep.Clients), len(e.Adapters))
	}
	for _, c := range rep.Clients {
		if c.Version != "1.2.3" {
			t.Errorf("%s: version %q (%s), want 1.2.3: the clients were not asked at once", c.Adapter, c.Version, c.VersionUnknown)
		}
	}
}
