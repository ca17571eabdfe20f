package realclient

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/fakemodel"
	"github.com/acc-go/acc/pkg/adapters/adapter"
)

// A guardStep is one tool call the model makes in a guard test.
type guardStep struct {
	call fakemodel.Call
	// deny: acc-hook must deny the call, and the model must be told why.
	deny bool
	// want is text the result of an allowed call shows.
	want string
	// proves is the capability a denial of this step proves ("" for none).
	proves string
}

func (s guardStep) String() string { return s.call.String() }

// holdsClaim has a manual session (`acc attach` in dir) take a guarded claim
// on file:src/a.go, and returns its participant id.
func (w *world) holdsClaim(dir string) string {
	w.t.Helper()
	holder := w.attach(dir, "holder")
	w.mustAcc(dir, append([]string{"claim", "--resource", "file:src/a.go", "--enforcement", "guarded", "--reason", "refactoring a.go"}, holder.args()...)...)
	return "holder"
}

// deniedBy is the part of acc's denial reason every test looks for.
func deniedBy(holder string) string { return "is claimed by " + holder }

// codexPatch is Codex's file edit: an apply_patch run through exec_command
// (0.171.0 offers the model no apply_patch tool of its own; Codex applies
// the patch itself, and its hooks see a Bash call).
func codexPatch(path, from, to string) fakemodel.Call {
	return fakemodel.Shell("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: " + path + "\n@@\n-" + from + "\n+" + to + "\n*** End Patch\nEOF\n")
}

// fileWrite is a call of the client's own file-writing tool that replaces
// the file at abs (path relative to the session's directory for Codex),
// with the read Claude Code requires before it writes an existing file.
func fileWrite(c Client, abs, rel string) []guardStep {
	switch c.Name {
	case "claude":
		return []guardStep{
			{call: fakemodel.Tool("Read", map[string]any{"file_path": abs}), want: "package a"},
			{call: fakemodel.Write(abs, "package hacked\n"), deny: true, proves: "guardFiles"},
		}
	case "codex":
		return []guardStep{{call: codexPatch(rel, "package a", "package hacked"), deny: true, proves: "guardFiles"}}
	default:
		return []guardStep{{call: fakemodel.Write(abs, "package hacked\n"), deny: true, proves: "guardFiles"}}
	}
}

// TestGuard proves the write guard on each real client: another
// session (a manual `acc attach`) holds a guarded claim on src/a.go; the
// client's file-write tool and its shell writing the file in every usual
// way are denied, the model is told the reason instead of a result, and the
// file stays unchanged; reads pass, and writes to unclaimed files pass. One
// client session plays every call, one per model turn. The client's session
// is attached as guarded exactly when the evidence proves its guard, and the
// denials of the shell and of the file tool feed the capability evidence.
func TestGuard(t *testing.T) {
	for _, c := range Pinned {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			holder := w.holdsClaim(w.wt)
			absA := filepath.Join(w.repo, "src", "a.go")
			stepsList := fileWrite(c, absA, "src/a.go")
			for _, cmd := range []string{
				"echo x > src/a.go",
				"printf x >> src/a.go",
				"sed -i s/package/pkg/ src/a.go",
				"echo x | tee src/a.go",
				"mv src/spare.txt src/a.go",
				"cp src/spare.txt src/a.go",
				"cd src/sub && echo x > ../a.go",
			} {
				s := guardStep{call: fakemodel.Shell(cmd), deny: true}
				if cmd == "echo x > src/a.go" {
					s.proves = "guardShell"
				}
				stepsList = append(stepsList, s)
			}
			stepsList = append(stepsList,
				guardStep{call: fakemodel.Shell("cat src/a.go"), want: "package a"},
				guardStep{call: fakemodel.Shell("grep -n package src/a.go"), want: "1:package a"},
				guardStep{call: fakemodel.Shell("echo ok > src/b.go")},
			)
			if c.Name == "codex" {
				stepsList = append(stepsList, guardStep{call: fakemodel.Write("src/c.go", "package c\n")})
			} else {
				stepsList = append(stepsList, guardStep{call: fakemodel.Write(filepath.Join(w.repo, "src", "c.go"), "package c\n")})
			}
			r := w.hooked(t, c, w.repo, nil)
			playGuard(t, w, r, holder, stepsList, "Make the edits to src/a.go.")

			for file, want := range map[string]string{"src/a.go": aGo, "src/spare.txt": "spare\n", "src/b.go": "ok\n", "src/c.go": "package c\n"} {
				b, err := os.ReadFile(filepath.Join(w.repo, file))
				if err != nil || string(b) != want {
					t.Errorf("%s holds %q (%v), want %q", file, b, err, want)
				}
			}
			unchanged := mustRead(t, absA) == aGo
			for _, name := range []string{"guardFiles", "guardShell"} {
				p := proof{Cap: name}
				for _, q := range r.proofs {
					if q.Cap == name {
						p = q
					}
				}
				p.OK = p.OK && unchanged
				observe(t, w, c, p)
			}
		})
	}
}

// TestGuardBypass proves on a real client (Claude
// Code): the write guard holds however the target is reached. The session
// runs in src/ of the repository reached through a symlink, and its hooks
// run in / (`cd / && …`), so relative targets can only resolve against the
// payload's cwd. Each of these is denied, and neither worktree's file
// changes: a relative target while the hook process runs elsewhere, spelled
// from a subdirectory; the path through the symlinked workspace (shell and
// Write); and the same file in the sibling worktree (shell and Write). A
// write to an unclaimed file beside them passes.
func TestGuardBypass(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	holder := w.holdsClaim(w.repo)
	link := filepath.Join(w.base, "link")
	if err := os.Symlink(w.repo, link); err != nil {
		t.Fatal(err)
	}
	viaLink := filepath.Join(link, "src", "a.go")
	sibling := filepath.Join(w.wt, "src", "a.go")
	r := w.hooked(t, Claude, filepath.Join(link, "src"), nil)
	// The hook process runs in /, so only the payload's cwd can place the
	// relative targets: the wrapper acc install's shim runs changes there
	// first.
	wrapper := r.setup.Install.HookBinary
	b, err := os.ReadFile(wrapper)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrapper, []byte(strings.Replace(string(b), "#!/bin/sh\n", "#!/bin/sh\ncd / || exit 1\n", 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	steps := []guardStep{
		{call: fakemodel.Shell("echo x > a.go"), deny: true},
		{call: fakemodel.Shell("printf x >> ./sub/../a.go"), deny: true},
		{call: fakemodel.Shell("echo x > " + viaLink), deny: true},
		{call: fakemodel.Tool("Read", map[string]any{"file_path": viaLink}), want: "package a"},
		{call: fakemodel.Write(viaLink, "package hacked\n"), deny: true},
		{call: fakemodel.Shell("echo x > " + sibling), deny: true},
		{call: fakemodel.Tool("Read", map[string]any{"file_path": sibling}), want: "package a"},
		{call: fakemodel.Write(sibling, "package hacked\n"), deny: true},
		{call: fakemodel.Shell("echo ok > ok.txt")},
	}
	recs := playGuard(t, w, r, holder, steps, "Edit a.go wherever you find it.")
	for _, rec := range recs {
		if rec.Dir != "/" {
			t.Errorf("%s hook ran in %s, not /", rec.Event, rec.Dir)
		}
	}
	if pre := recordsOf(recs, r.client.PreTool); len(pre) > 0 {
		t.Logf("the payload's cwd: %v (the hook process ran in %s)", pre[0].Payload()["cwd"], pre[0].Dir)
	}
	for _, p := range []string{filepath.Join(w.repo, "src", "a.go"), sibling} {
		if got := mustRead(t, p); got != aGo {
			t.Errorf("%s holds %q, want %q", p, got, aGo)
		}
	}
	if got := mustRead(t, filepath.Join(w.repo, "src", "ok.txt")); got != "ok\n" {
		t.Errorf("the unclaimed ok.txt holds %q", got)
	}
}

// playGuard runs the client once through steps (one tool call per model
// turn, then a closing text) and checks each call: a denial names the
// holder to the hook's client and to the model; an allowed call is not
// denied and shows what it should. The first turn also checks that the
// session is attached with the enforcement its evidence gives. It returns
// the run's hook records; the denials that prove a capability are left in
// r.proofs for the caller, who knows whether the file stayed unchanged.
func playGuard(t *testing.T, w *world, r *run, holder string, list []guardStep, prompt string) []HookRecord {
	t.Helper()
	c := r.client
	var s steps
	for i, step := range list {
		r.model.Append(s.reply(func(req, _ *fakemodel.Request) (fakemodel.Reply, error) {
			if i == 0 {
				if err := check(t, w.wantEnforcement(req, c)); err != nil {
					return fakemodel.Reply{}, err
				}
			}
			return fakemodel.Run(step.call), nil
		}))
	}
	r.model.Append(fakemodel.Say("Done with the edits I was allowed to make."))
	_, recs := r.exec(prompt)
	calls := r.wantModelCalls(len(list) + 1)
	// acc install wires the pre-tool hook for the tools that write (the
	// file tools and the shell); a read runs with no hook at all.
	watched := installedToolMatcher(t, c)
	var hooked []int
	for i, step := range list {
		if step.call.Kind != fakemodel.CallRaw || watched(step.call.Name) {
			hooked = append(hooked, i)
		}
	}
	pre := recordsOf(recs, c.PreTool)
	if len(pre) != len(hooked) {
		t.Fatalf("%s fired %d times for %d tool calls of watched tools", c.PreTool, len(pre), len(hooked))
	}
	for i, step := range list {
		res := r.resultFor(calls[i+1], calls[i])
		var rec HookRecord
		if j := slices.Index(hooked, i); j >= 0 {
			rec = pre[j]
		} else if step.deny {
			t.Errorf("%v must be denied, but acc install does not hook %s", step, step.call.Name)
			continue
		}
		reason := denyReason(rec)
		switch {
		case step.deny && !strings.Contains(reason, deniedBy(holder)):
			t.Errorf("%v was not denied: acc-hook answered %q (stderr %q, exit %d)", step, rec.Stdout, rec.Stderr, rec.Exit)
		case step.deny && !strings.Contains(res.Output, deniedBy(holder)):
			t.Errorf("%v was denied, but the model was told %q", step, res.Output)
		case step.deny:
			t.Logf("denied %v; the model was told %q", step, clip(res.Output, 160))
			if step.proves != "" {
				r.proofs = append(r.proofs, proof{Cap: step.proves, OK: true, Record: rec, Purpose: "deny", Marker: reason,
					Effect: "blocked", Seen: "the tool did not run and its result was: " + res.Output})
			}
		case reason != "":
			t.Errorf("%v was denied: %q", step, reason)
		case res.Error || !strings.Contains(res.Output, step.want):
			t.Errorf("%v: the model got %q (error %v), want it to show %q", step, res.Output, res.Error, step.want)
		default:
			t.Logf("allowed %v", step)
		}
	}
	return recs
}

// installedToolMatcher reports whether a call of the named tool runs the
// pre-tool hook acc install wires for c: its matcher, a regular expression
// over the tool name (adapter.GuardMatcher).
func installedToolMatcher(t *testing.T, c Client) func(tool string) bool {
	t.Helper()
	a, ok := clients.Get(c.Name).(adapter.Installer)
	if !ok {
		t.Fatalf("%s has no install plan", c.Name)
	}
	for _, art := range a.InstallPlan(adapter.InstallEnv{Home: "/home", Shim: "/shim"}).Artifacts {
		if art.Kind == adapter.ArtifactTOMLBlock {
			// Kimi Code: [[hooks]] tables in config.toml.
			var block struct {
				Hooks []struct{ Event, Matcher string }
			}
			if err := toml.Unmarshal(art.Content, &block); err != nil {
				t.Fatalf("%s: the installed hook block does not parse: %v", c.Name, err)
			}
			for _, h := range block.Hooks {
				if h.Event == c.PreTool {
					re, err := regexp.Compile(h.Matcher)
					if err != nil {
						t.Fatalf("%s: the installed matcher %q is not a regular expression: %v", c.Name, h.Matcher, err)
					}
					return re.MatchString
				}
			}
		}
		if art.Kind == adapter.ArtifactFile && (filepath.Ext(art.Path) == ".js" || filepath.Ext(art.Path) == ".ts") {
			// acc's plugin (OpenCode) or extension (Pi): it runs acc-hook
			// for every tool.
			return func(string) bool { return true }
		}
		if art.Kind == adapter.ArtifactFile && filepath.Ext(art.Path) == ".json" {
			// A hook file of acc's own (Copilot CLI): a handler with no
			// matcher runs for every tool.
			var file struct {
				Hooks map[string][]struct{ Matcher string }
			}
			if json.Unmarshal(art.Content, &file) == nil && len(file.Hooks[c.PreTool]) > 0 {
				if m := file.Hooks[c.PreTool][0].Matcher; m != "" {
					t.Fatalf("%s: acc's hook file has a matcher %q the test does not read", c.Name, m)
				}
				return func(string) bool { return true }
			}
		}
		if len(art.Pointer) == 2 && art.Pointer[1] == c.PreTool {
			var group struct{ Matcher string }
			if err := json.Unmarshal(art.Value, &group); err != nil {
				t.Fatal(err)
			}
			re, err := regexp.Compile(group.Matcher)
			if err != nil {
				t.Fatalf("%s: the installed matcher %q is not a regular expression: %v", c.Name, group.Matcher, err)
			}
			return re.MatchString
		}
	}
	t.Fatalf("%s: acc install wires no %s", c.Name, c.PreTool)
	return nil
}

// wantEnforcement checks, while the client is mid-turn, that the session
// its model was shown is live, of this client, and guarded exactly when the
// evidence for the client's version proves its guard.
func (w *world) wantEnforcement(req *fakemodel.Request, c Client) error {
	me, err := w.shownCaller(req, c.Name)
	if err != nil {
		return err
	}
	st, err := w.status()
	if err != nil {
		return err
	}
	_, _, enforcement, _ := st.session(me.Session)
	want := "advisory"
	if expectGuarded(c) {
		want = "guarded"
	}
	if enforcement != want {
		return fmt.Errorf("%s@%s's session %s is attached %s; its evidence makes it %s", c.Name, c.Version, me.Session, enforcement, want)
	}
	return nil
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
