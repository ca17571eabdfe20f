package realclient

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// treeHash hashes every file under dir (path, mode and bytes), leaving out
// paths for which skip says so.
func treeHash(t *testing.T, dir string, skip func(rel string) bool) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err != nil || (skip != nil && skip(rel)) {
			return nil
		}
		info, _ := d.Info()
		fmt.Fprintf(h, "%s %v\n", rel, info.Mode())
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(h, "%x\n", sha256.Sum256(b))
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestCertify (docs/certify.md#the-proofs): `acc certify --adapter <id>`,
// run for each pinned client by a user whose PATH has them all (with the
// pinned Node, which Kimi Code needs), proves every capability the
// built-in evidence claims for those versions; acc
// doctor then reports them proven here; the user's HOME is byte-identical
// afterwards and the data home gained only the evidence records; no
// temporary directory is left.
func TestCertify(t *testing.T) {
	bin := accBinaries(t)
	onPath := t.TempDir()
	for _, c := range Pinned {
		_, exe := requireClient(t, c)
		if err := os.Symlink(exe, filepath.Join(onPath, c.Name)); err != nil {
			t.Fatal(err)
		}
	}
	home, data := filepath.Join(t.TempDir(), "home"), filepath.Join(t.TempDir(), "data")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte("{\"theme\": \"dark\"}\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("export EDITOR=vi\n"), 0o644)
	os.MkdirAll(data, 0o755)
	tmp := t.TempDir() // certify's own temporary directories go here
	// Kilo Code's `kilo --version` takes 2.5–8 s (its package names no bin
	// to read the version from), more than acc doctor's 3 s: every
	// version question here may take 30 s.
	env := []string{"PATH=" + Kimi.PathFor(onPath+string(os.PathListSeparator)+os.Getenv("PATH")), "HOME=" + home, "ACC_DATA_HOME=" + data, "LANG=C.UTF-8", "TMPDIR=" + tmp,
		"ACC_PROBE_TIMEOUT_MS=30000"}
	// acc doctor runs with a TMPDIR of its own: the clients it asks their
	// version may leave files there (`kilo --version` makes $TMPDIR/kilo),
	// and what is left in tmp is certify's doing.
	doctorEnv := append(slices.Clone(env), "TMPDIR="+t.TempDir())
	// Before certify, acc doctor names the built-in evidence acc's own
	// runs recorded for Kimi Code 2.1.0 (its version is read from its npm
	// package, so no slow --version can hide it).
	doc := exec.Command(filepath.Join(bin, "acc"), "doctor", "--json")
	doc.Env, doc.Dir = doctorEnv, home
	docOut, _ := doc.Output()
	var before struct {
		Data struct {
			Clients []struct {
				Adapter, Proof string
			} `json:"clients"`
		} `json:"data"`
	}
	_ = json.Unmarshal(docOut, &before)
	kimiBefore := ""
	for _, c := range before.Data.Clients {
		if c.Adapter == Kimi.Name {
			kimiBefore = c.Proof
		}
	}
	// Named as proven by acc's own run of that very version (its built-in
	// record comes from these tests), not by upstream's captures.
	if want := "proven at " + KimiCodeVersion + ", running " + KimiCodeVersion + " (acc's own run of Kimi Code " + KimiCodeVersion + ": "; !strings.HasPrefix(kimiBefore, want) {
		t.Errorf("before certify, acc doctor says of Kimi Code %q, want it to start %q", kimiBefore, want)
	}
	homeBefore, dataBefore := treeHash(t, home, nil), treeHash(t, data, nil)

	// `acc certify --adapter <id>` for each client, two processes at a
	// time: much of a client's run is waiting on its hooks and its exit,
	// so two share the machine's two cores better than one.
	type result struct {
		Adapter, Version, Evidence string
		Proofs                     []struct {
			Capability string
			Proven     bool
			Why        string
		}
	}
	type results struct {
		Results []result `json:"results"`
	}
	var (
		mu   sync.Mutex
		res  []result
		wg   sync.WaitGroup
		slot = make(chan struct{}, 2)
	)
	for _, c := range Pinned {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slot <- struct{}{}
			defer func() { <-slot }()
			// --timeout: two clients share the cores, and Kilo's version
			// question alone may take 30 s here.
			cmd := exec.Command(filepath.Join(bin, "acc"), "certify", "--json", "--adapter", c.Name, "--timeout", "6m")
			cmd.Env, cmd.Dir = env, home
			out, err := cmd.Output()
			var envl struct {
				OK    bool    `json:"ok"`
				Data  results `json:"data"`
				Error struct {
					Code    int
					Details struct {
						ReasonCode string `json:"reasonCode"`
						results
					}
				} `json:"error"`
			}
			if jerr := json.Unmarshal(out, &envl); jerr != nil {
				t.Errorf("acc certify --adapter %s: %v %s", c.Name, err, out)
				return
			}
			// Exit 0 exactly when every capability was proven; otherwise
			// exit 4, not_certified, with the same results (Kimi Code has
			// no session end under -p — its record keeps what the
			// interactive TestSessionEndInteractive proved — and does not
			// wait for its post-tool hook).
			got := envl.Data.Results
			if !envl.OK {
				got = envl.Error.Details.Results
				if envl.Error.Code != 4 || envl.Error.Details.ReasonCode != "not_certified" {
					t.Errorf("acc certify --adapter %s: %v %s", c.Name, err, out)
					return
				}
			}
			if len(got) != 1 || got[0].Adapter != c.Name {
				t.Errorf("acc certify --adapter %s gave %d results: %s", c.Name, len(got), out)
				return
			}
			every := true
			for _, p := range got[0].Proofs {
				every = every && p.Proven
			}
			if every != envl.OK {
				t.Errorf("acc certify --adapter %s: ok %v, but every capability proven: %v", c.Name, envl.OK, every)
			}
			mu.Lock()
			res = append(res, got[0])
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(res) != len(Pinned) {
		t.Fatalf("certified %d clients, want %d", len(res), len(Pinned))
	}
	for _, r := range res {
		builtIn, _ := adapter.CapabilitiesFor(clients.Get(r.Adapter), r.Version)
		claims := map[string]bool{"attach": builtIn.Attach, "nextTurn": builtIn.NextTurn, "guardFiles": builtIn.GuardFiles, "guardShell": builtIn.GuardShell, "sessionEnd": builtIn.SessionEnd, "midTurn": builtIn.MidTurn, "endOfTurn": builtIn.EndOfTurn}
		headless := map[string]Client{}
		for _, c := range Pinned {
			headless[c.Name] = c
		}
		for _, p := range r.Proofs {
			if p.Capability == "sessionEnd" && headless[r.Adapter].SessionEnd == "" {
				// No session end fires headless: the line says so, and
				// that acc's own interactive run proved it, which the
				// record keeps.
				if p.Proven || !strings.Contains(p.Why, "(the client fires none in a headless run)") ||
					claims["sessionEnd"] != strings.Contains(p.Why, "acc's own interactive run proved it for this version, and the record keeps that") {
					t.Errorf("%s %s sessionEnd: proven %v, %q", r.Adapter, r.Version, p.Proven, p.Why)
				}
				var rec struct {
					Proven struct {
						SessionEnd bool `json:"sessionEnd"`
					} `json:"proven"`
				}
				if b, err := os.ReadFile(r.Evidence); err != nil || json.Unmarshal(b, &rec) != nil || rec.Proven.SessionEnd != claims["sessionEnd"] {
					t.Errorf("%s %s: the record %s has sessionEnd %v, want the built-in %v (read: %v)", r.Adapter, r.Version, r.Evidence, rec.Proven.SessionEnd, claims["sessionEnd"], err)
				}
				t.Logf("%s %s %s: %v (%s)", r.Adapter, r.Version, p.Capability, p.Proven, p.Why)
				continue
			}
			if claims[p.Capability] && !p.Proven {
				t.Errorf("%s %s: the built-in evidence claims %s, acc certify did not prove it: %s", r.Adapter, r.Version, p.Capability, p.Why)
			}
			t.Logf("%s %s %s: %v (%s)", r.Adapter, r.Version, p.Capability, p.Proven, p.Why)
		}
		if !strings.HasPrefix(r.Evidence, filepath.Join(data, "acc", "evidence", r.Adapter)) {
			t.Errorf("%s: evidence recorded in %q", r.Adapter, r.Evidence)
		}
	}

	// The user's HOME is as it was; the data home gained only the
	// evidence records. (Checked before acc doctor runs: doctor asks each
	// client its version with the user's HOME, which a client may use.)
	if after := treeHash(t, home, nil); after != homeBefore {
		t.Error("acc certify changed the user's HOME")
	}
	if got := treeHash(t, data, func(rel string) bool { return rel == "acc" || strings.HasPrefix(rel, filepath.Join("acc", "evidence")) }); got != dataBefore {
		t.Error("acc certify changed the data home beyond its evidence records")
	}

	// acc doctor asks each client its version within ACC_PROBE_TIMEOUT_MS
	// (env, above); Gemini CLI can take longer than doctor's own 3 s on a
	// loaded machine, so doctor gets three tries.
	here := 0
	var out []byte
	var kimiProof string
	for try := 0; try < 3 && here != len(Pinned); try++ {
		doc := exec.Command(filepath.Join(bin, "acc"), "doctor", "--json")
		doc.Env, doc.Dir = doctorEnv, home
		out, _ = doc.Output()
		var report struct {
			Data struct {
				Clients []struct {
					Adapter string `json:"adapter"`
					Proof   string `json:"proof"`
				} `json:"clients"`
			} `json:"data"`
		}
		json.Unmarshal(out, &report)
		here = 0
		for _, c := range report.Data.Clients {
			if strings.Contains(c.Proof, "proven here on") {
				here++
			}
			if c.Adapter == Kimi.Name {
				kimiProof = c.Proof
			}
		}
	}
	if here != len(Pinned) {
		t.Errorf("acc doctor reports %d clients proven here, want %d:\n%s", here, len(Pinned), out)
	}
	// Kimi Code 2.1.0, named as proven by acc's own run on this machine,
	// with what that run proved and the session end its record keeps.
	// The session end certify's headless run cannot see is named as kept
	// from acc's own run, not as proven here.
	kept := "; kept from acc's own run of " + KimiCodeVersion + ": session end"
	if want := "for " + KimiCodeVersion + " by acc certify: "; !strings.HasPrefix(kimiProof, "proven here on ") || !strings.Contains(kimiProof, want) || !strings.Contains(kimiProof, kept) || strings.Contains(strings.SplitN(kimiProof, ";", 2)[0], "session end") {
		t.Errorf("acc doctor says of Kimi Code %q; want \"proven here on <date> %s…\"", kimiProof, want)
	} else {
		t.Logf("acc doctor: kimi: %s", kimiProof)
	}

	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("acc certify left %d entries in TMPDIR: %v", len(left), left)
	}
}
