package realclient

// Capability evidence (docs/decisions.md#6-measured-capabilities) from the
// end-to-end runs.
//
// The conversation and guard tests report what they proved about each real
// client: attach (its session start fired and acc attached the session),
// nextTurn (context acc-hook printed before a turn reached the model's next
// request), guardShell and guardFiles (acc-hook's denial stopped the shell
// tool, or the file-write tool, and the file stayed as it was), sessionEnd
// (the session end hook fired and acc closed the session), midTurn (a peer
// message acc-hook printed after a tool call reached the model's next
// request) and endOfTurn (acc-hook's hold of a stop kept the agent working
// and the model's next request carried the message).
//
// Without ACC_UPDATE_EVIDENCE=1 each report is checked against the adapter's
// embedded evidence for the client version under test: a record for exactly
// that version must claim exactly what the run observed, and capabilities
// carried forward from an older record must be observed too — so a
// capability is never claimed without a run proving it.
//
// With ACC_UPDATE_EVIDENCE=1 the reports are collected instead and, when the
// whole package passed and every capability of a client was measured,
// TestMain rewrites pkg/adapters/<client>/evidence/<version>.json and the
// evidence/<version>/ directory beside it (payloads, observations.json,
// env.json, SOURCE.md) from them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/evidence"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/adapters/adapter/adaptertest"
)

// UpdateEvidenceEnv is the switch that makes the tests rewrite the evidence:
// 1 for every client measured (and the ACP families), or a comma-separated
// list of client names (ACC_UPDATE_EVIDENCE=kimi) for those clients' records
// alone, from a run of just their tests (-run) — each must still have every
// capability measured in it.
const UpdateEvidenceEnv = "ACC_UPDATE_EVIDENCE"

func updatingEvidence() bool {
	v := os.Getenv(UpdateEvidenceEnv)
	return v != "" && v != "0"
}

// evidenceClients is the list UpdateEvidenceEnv names, nil for every client
// (1).
func evidenceClients() []string {
	if v := os.Getenv(UpdateEvidenceEnv); v != "1" {
		return strings.Split(v, ",")
	}
	return nil
}

// UpdateTurnEvidenceEnv is the narrower switch for the turn-delivery
// capabilities alone: `ACC_UPDATE_TURN_EVIDENCE=1 go test -run TestMidTurn
// ./internal/realclient` adds midTurn and endOfTurn, with the answers that
// proved them, to each measured client's existing record, leaving
// everything else of it as it was.
const UpdateTurnEvidenceEnv = "ACC_UPDATE_TURN_EVIDENCE"

func updatingTurnEvidence() bool { return os.Getenv(UpdateTurnEvidenceEnv) == "1" }

// turnCaps are the capabilities UpdateTurnEvidenceEnv records.
var turnCaps = []string{"midTurn", "endOfTurn"}

// The capabilities these tests measure, in the order of adapter.Capabilities.
var capNames = []string{"attach", "nextTurn", "guardFiles", "guardShell", "sessionEnd", "midTurn", "endOfTurn"}

func capOf(c adapter.Capabilities, name string) bool {
	switch name {
	case "attach":
		return c.Attach
	case "nextTurn":
		return c.NextTurn
	case "guardFiles":
		return c.GuardFiles
	case "guardShell":
		return c.GuardShell
	case "sessionEnd":
		return c.SessionEnd
	case "livePush":
		return c.LivePush
	case "midTurn":
		return c.MidTurn
	case "endOfTurn":
		return c.EndOfTurn
	}
	panic("unknown capability " + name)
}

// A proof is what one test observed about one capability of a client.
type proof struct {
	Cap  string
	OK   bool
	Test string
	// Record is the hook call that proves it (its payload, and for an inject
	// or deny the answer acc-hook gave).
	Record HookRecord
	// Purpose is "inject" or "deny" for a proof by an answer, "" for one by
	// an event firing; Marker is the answer's text, Effect what it did
	// ("delivered", "blocked"), Seen what reached the model.
	Purpose, Marker, Effect, Seen string
}

// clientObservations are the proofs gathered for one client version.
type clientObservations struct {
	client Client
	proofs map[string]proof
	fired  map[string]HookRecord // the first payload of each event seen
	env    map[string]*envVar
}

type envVar struct {
	events           map[string]bool
	equalsSessionID  bool
	differsSessionID bool
}

var (
	evidenceMu  sync.Mutex
	observation = map[string]*clientObservations{}
)

// sanitizer replaces a world's temporary paths with fixed placeholders, so
// recorded payloads name no machine's directories.
func (w *world) sanitizer() *strings.Replacer {
	// Claude Code also names its project directory after the path, with
	// every / turned into -.
	return strings.NewReplacer(w.base, "/tmp/acc-e2e", w.bin, "/tmp/acc-e2e/bin",
		strings.ReplaceAll(w.base, "/", "-"), "-tmp-acc-e2e")
}

func sanitizeRecord(w *world, rec HookRecord) HookRecord {
	s := w.sanitizer()
	rec.Stdin = json.RawMessage(s.Replace(string(rec.Stdin)))
	rec.Stdout = s.Replace(rec.Stdout)
	rec.Stderr = s.Replace(rec.Stderr)
	rec.Dir = s.Replace(rec.Dir)
	return rec
}

func observationsOf(c Client) *clientObservations {
	o := observation[c.Name]
	if o == nil || o.client.Version != c.Version {
		o = &clientObservations{client: c, proofs: map[string]proof{}, fired: map[string]HookRecord{}, env: map[string]*envVar{}}
		observation[c.Name] = o
	}
	return o
}

// observe reports one proof: checked against the embedded evidence, or
// collected under the update switch.
func observe(t testing.TB, w *world, c Client, p proof) {
	t.Helper()
	p.Test = t.Name()
	p.Record = sanitizeRecord(w, p.Record)
	p.Marker = w.sanitizer().Replace(p.Marker)
	p.Seen = w.sanitizer().Replace(p.Seen)
	if p.OK && p.Purpose != "" {
		if _, err := classify(clients.Get(c.Name), p.Cap, p.Record); err != nil {
			t.Errorf("%s cannot rest on this call: %v", p.Cap, err)
			p.OK = false
		}
	}
	if !updatingEvidence() && !(updatingTurnEvidence() && slices.Contains(turnCaps, p.Cap)) {
		checkCapability(t, c, p.Cap, p.OK)
		return
	}
	evidenceMu.Lock()
	defer evidenceMu.Unlock()
	o := observationsOf(c)
	if old, ok := o.proofs[p.Cap]; !ok || (old.OK && !p.OK) || (old.OK == p.OK && p.Test < old.Test) {
		o.proofs[p.Cap] = p
	}
}

// observeFired keeps the first payload of each event and what the client put
// in its hooks' environment.
func observeFired(w *world, r *run, recs []HookRecord) {
	if !updatingEvidence() {
		return
	}
	evidenceMu.Lock()
	defer evidenceMu.Unlock()
	o := observationsOf(r.client)
	ours := map[string]bool{}
	for _, kv := range r.setup.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		ours[k] = true
	}
	for _, rec := range recs {
		if _, ok := o.fired[rec.Event]; !ok {
			o.fired[rec.Event] = sanitizeRecord(w, rec)
		}
		sid, _ := rec.Payload()["session_id"].(string)
		for k, v := range rec.Env {
			if ours[k] || !slices.ContainsFunc(ClientEnvPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
				continue
			}
			ev := o.env[k]
			if ev == nil {
				ev = &envVar{events: map[string]bool{}}
				o.env[k] = ev
			}
			ev.events[rec.Event] = true
			if sid != "" && v == sid {
				ev.equalsSessionID = true
			} else {
				ev.differsSessionID = true
			}
		}
	}
}

// checkCapability compares one observation with the adapter's evidence for
// the client version under test.
func checkCapability(t testing.TB, c Client, name string, observed bool) {
	t.Helper()
	a := clients.Get(c.Name)
	var exact *adapter.Evidence
	for _, e := range a.Evidence() {
		if e.Version == c.Version {
			exact = &e
		}
	}
	inherited, _ := adapter.CapabilitiesFor(a, c.Version)
	switch {
	case exact != nil && capOf(exact.Proven, name) != observed:
		t.Errorf("pkg/adapters/%s/evidence/%s.json records %s=%v, but this run observed %v; if the client really changed, rerun the whole package with %s=1",
			c.Name, c.Version, name, capOf(exact.Proven, name), observed, UpdateEvidenceEnv)
	case exact == nil && capOf(inherited, name) && !observed:
		t.Errorf("the %s adapter claims %s for version %s (carried forward from older evidence), but this run did not prove it", c.Name, name, c.Version)
	case exact == nil && observed && !capOf(inherited, name):
		t.Logf("%s@%s: this run proved %s, which no evidence records yet (%s=1 records it)", c.Name, c.Version, name, UpdateEvidenceEnv)
	default:
		t.Logf("%s@%s: %s=%v agrees with the recorded evidence", c.Name, c.Version, name, observed)
	}
}

// expectGuarded is whether acc-hook must attach sessions of c as guarded:
// what the adapter's evidence, embedded in the binaries under test, proves
// for the version under test.
func expectGuarded(c Client) bool {
	caps, _ := adapter.CapabilitiesFor(clients.Get(c.Name), c.Version)
	return caps.Guarded()
}

// observeConversation reports attach, nextTurn and sessionEnd for the
// client of r, from its runs in a conversation (all is `acc status --all`
// after the runs).
func observeConversation(t *testing.T, w *world, r *run, all *statusView) {
	t.Helper()
	recs := r.records()
	observeFired(w, r, recs)
	c := r.client

	// attach: session start fired, acc-hook answered with the owner line,
	// and the room has sessions of this client.
	// (A client that shows the model no session start answer, Kimi Code,
	// gets the owner line with its first before-turn answer instead.)
	starts := recordsOf(recs, c.SessionStart)
	attached := false
	for _, p := range all.Participants {
		attached = attached || p.Harness == c.Name
	}
	lines := starts
	if !contextShown(c, c.SessionStart) {
		lines = recordsOf(recs, c.BeforeTurn)
	}
	if len(starts) == 0 || len(lines) == 0 {
		t.Errorf("%s never fired", c.SessionStart)
		observe(t, w, c, proof{Cap: "attach"})
	} else {
		ok := attached && strings.Contains(hookContext(lines[0]), "acc: --session ")
		if !ok {
			t.Errorf("%s fired but acc did not attach the session (answer %q)", lines[0].Event, lines[0].Stdout)
		}
		observe(t, w, c, proof{Cap: "attach", OK: ok, Record: starts[0]})
	}

	// nextTurn: a before-turn context acc-hook printed reached a model
	// request (the fullest one is kept: the room, not only the owner line).
	nextTurn := proof{Cap: "nextTurn"}
	calls := r.model.ModelCalls()
	for _, rec := range recordsOf(recs, c.BeforeTurn) {
		text := hookContext(rec)
		if text == "" || len(text) <= len(nextTurn.Marker) {
			continue
		}
		for _, q := range calls {
			if q.Contains(shownAs(c, text)) {
				nextTurn = proof{Cap: "nextTurn", OK: true, Record: rec, Purpose: "inject", Marker: text, Effect: "delivered",
					Seen: fmt.Sprintf("the text, unchanged%s, in %s of the next model request", map[bool]string{true: " (angle brackets escaped)"}[escapesAngles(c)], strings.ReplaceAll(where(q, shownAs(c, text)), ", type <nil>", ""))}
				break
			}
		}
	}
	if !nextTurn.OK {
		t.Errorf("no %s context acc-hook printed reached the model", c.BeforeTurn)
	}
	observe(t, w, c, nextTurn)

	// sessionEnd: the event fired and acc closed every session of the client.
	ends := recordsOf(recs, c.SessionEnd)
	ended := proof{Cap: "sessionEnd"}
	if c.SessionEnd == "" {
		// The client has no session end under -p (Kimi Code): it is
		// measured interactively, by TestSessionEndInteractive.
		return
	}
	if len(ends) > 0 {
		ended.Record, ended.OK = ends[0], true
		for _, p := range all.Participants {
			if p.Harness == c.Name && p.State != "closed" {
				ended.OK = false
				t.Errorf("%s fired, but session %s of %s is %s", c.SessionEnd, p.SessionID, c.Name, p.State)
			}
		}
	} else {
		t.Errorf("%s never fired", c.SessionEnd)
	}
	observe(t, w, c, ended)
}

// finishEvidence is TestMain's last step: under the update switch, after a
// passing run, it rewrites the evidence of every client that was measured.
func finishEvidence(code int) int {
	if updatingTurnEvidence() && !updatingEvidence() {
		return finishTurnEvidence(code)
	}
	if !updatingEvidence() {
		return code
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "%s=1: tests failed, the evidence was not rewritten\n", UpdateEvidenceEnv)
		return code
	}
	if len(observation) == 0 && len(acpObservations) == 0 {
		fmt.Fprintf(os.Stderr, "%s=1: no client was measured (were the clients installed?); the evidence was not rewritten\n", UpdateEvidenceEnv)
		return 1
	}
	names := make([]string, 0, len(observation))
	for n := range observation {
		if only := evidenceClients(); only == nil || slices.Contains(only, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		fmt.Fprintf(os.Stderr, "%s=%s: none of these clients was measured; the evidence was not rewritten\n", UpdateEvidenceEnv, os.Getenv(UpdateEvidenceEnv))
		return 1
	}
	for _, n := range names {
		write := writeEvidence
		if onlySessionEnd(observation[n]) {
			write = mergeSessionEnd
		}
		path, err := write(observation[n], time.Now().UTC())
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s=1: %s: %v\n", UpdateEvidenceEnv, n, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "%s=%s: wrote %s\n", UpdateEvidenceEnv, os.Getenv(UpdateEvidenceEnv), path)
	}
	return code
}

// writeEvidence rewrites one client's evidence from its observations and
// returns the record's path.
func writeEvidence(o *clientObservations, now time.Time) (string, error) {
	c := o.client
	a := clients.Get(c.Name)
	// Every capability must have been measured; one a passing run measured
	// as not proven (a client without the event, e.g. Kimi Code's session
	// end, or whose answer does not reach the model) is recorded false.
	var missing []string
	for _, n := range capNames {
		if _, ok := o.proofs[n]; !ok {
			missing = append(missing, n)
		}
	}
	// Live push is measured only for the clients with a live transport
	// (TestLivePush); for them it must be proven like the rest.
	live := slices.ContainsFunc(liveClients, func(l Client) bool { return l.Name == c.Name })
	if p, ok := o.proofs["livePush"]; live && (!ok || !p.OK) {
		missing = append(missing, "livePush")
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%s@%s: %s not proven in this run; run the whole package (no -run) to rewrite its evidence", c.Name, c.Version, strings.Join(missing, ", "))
	}
	module := filepath.Join("..", "..", "pkg", "adapters", c.Name)
	if _, err := os.Stat(filepath.Join(module, "go.mod")); err != nil {
		return "", fmt.Errorf("no adapter module at %s: %w", module, err)
	}
	dir := filepath.Join(module, "evidence", c.Version)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "payloads"), 0o755); err != nil {
		return "", err
	}
	writePayload := func(name string, rec HookRecord) error {
		var b bytes.Buffer
		if err := json.Indent(&b, rec.Stdin, "", "  "); err != nil {
			return fmt.Errorf("payload %s: %w", name, err)
		}
		b.WriteByte('\n')
		return os.WriteFile(filepath.Join(dir, "payloads", name), b.Bytes(), 0o644)
	}

	obs := adaptertest.Observations{
		Client: a.DisplayName(), Version: c.Version, Platform: platform(), ObservedAt: now.Format(time.RFC3339),
		Source: "go test ./internal/realclient with " + UpdateEvidenceEnv + "=" + os.Getenv(UpdateEvidenceEnv) + ": " + c.Package + "@" + c.Version +
			" run headless against the loopback fake model (internal/fakemodel), its hooks running the freshly built acc-hook behind the test's recorder",
		Responses: []adaptertest.Response{},
	}
	// The headless events in firing order, then any that fired only
	// interactively (Kimi Code's SessionEnd).
	fired := c.Events()
	var extra []string
	for ev := range o.fired {
		if !slices.Contains(fired, ev) {
			extra = append(extra, ev)
		}
	}
	sort.Strings(extra)
	for _, ev := range append(fired, extra...) {
		rec, ok := o.fired[ev]
		if !ok {
			continue
		}
		if err := writePayload(ev+".json", rec); err != nil {
			return "", err
		}
		obs.Fired = append(obs.Fired, ev)
	}
	names := capNames
	if live {
		names = append(slices.Clone(capNames), "livePush")
	}
	var tests []string
	for _, n := range names {
		p := o.proofs[n]
		if !slices.Contains(tests, p.Test) {
			tests = append(tests, p.Test)
		}
		if !p.OK {
			continue
		}
		if p.Purpose == "" {
			if _, ok := o.fired[p.Record.Event]; !ok {
				return "", fmt.Errorf("%s rests on %s, whose payload was not kept", n, p.Record.Event)
			}
			continue
		}
		name := p.Record.Event + "-" + n + ".json"
		if err := writePayload(name, p.Record); err != nil {
			return "", err
		}
		resp := adaptertest.Response{Purpose: p.Purpose, Event: p.Record.Event, Payload: name,
			Stdout: strings.TrimRight(p.Record.Stdout, "\n"), Stderr: strings.TrimRight(p.Record.Stderr, "\n"),
			ExitCode: p.Record.Exit, Marker: p.Marker, Effect: p.Effect, Seen: p.Seen}
		if err := reproduces(a, n, p.Record, resp); err != nil {
			return "", fmt.Errorf("%s: %w", n, err)
		}
		obs.Responses = append(obs.Responses, resp)
	}
	sort.Strings(tests)
	obs.Note = "Proven by " + strings.Join(tests, ", ") + "."
	if err := writePretty(filepath.Join(dir, "observations.json"), obs); err != nil {
		return "", err
	}
	if err := writePretty(filepath.Join(dir, "env.json"), envReport(o, a)); err != nil {
		return "", err
	}
	source := fmt.Sprintf(`# %s %s — where this evidence comes from

Written by the real-client tests (`+"`%s=1 go test ./internal/realclient`"+`) on %s;
do not edit by hand. Without the switch the same tests check that `+"`../%s.json`"+` claims
exactly what they observe.

- `+"`payloads/`"+` are hook inputs %s %s gave acc-hook in those runs, with the tests'
  temporary directories replaced by `+"`/tmp/acc-e2e`"+`: one per event that fired
  (`+"`<Event>.json`"+`) and the ones a capability rests on (`+"`<Event>-<capability>.json`"+`).
- `+"`observations.json`"+` lists the events that fired and the answers acc-hook gave that
  proved a capability: the context it printed and where the model's next request showed
  it; the denials and what the model was told instead of the tool's result.
- `+"`env.json`"+` names the variables the client itself put into its hooks' environment.

`+"`../%s.json`"+` is the record acc reads: what these observations prove.
`, a.DisplayName(), c.Version, UpdateEvidenceEnv, now.Format("2006-01-02"), c.Version, a.DisplayName(), c.Version, c.Version)
	if err := os.WriteFile(filepath.Join(dir, "SOURCE.md"), []byte(source), 0o644); err != nil {
		return "", err
	}
	proven := func(n string) bool { return o.proofs[n].OK }
	ending := sessionEndNote(c, o.proofs["sessionEnd"])
	rec := adapter.Evidence{
		Version: c.Version,
		Proven: adapter.Capabilities{Attach: proven("attach"), NextTurn: proven("nextTurn"), GuardFiles: proven("guardFiles"),
			GuardShell: proven("guardShell"), SessionEnd: proven("sessionEnd"), LivePush: live, MidTurn: proven("midTurn"), EndOfTurn: proven("endOfTurn")},
		Test:     evidence.RealClientTest + strings.Join(tests, ", ") + " (" + UpdateEvidenceEnv + "=" + os.Getenv(UpdateEvidenceEnv) + " go test ./internal/realclient)",
		Recorded: now.Format(time.RFC3339),
		Note: platform() + ", " + c.Package + "@" + c.Version + " headless against the loopback fake model, hooks running acc-hook. " +
			ending + "; the context acc-hook printed before a turn reached the next model request; " +
			"acc-hook's denial stopped the " + fileTool(c) + " and the shell tool (" + c.ShellTool + ") writing into another session's guarded claim, the file stayed unchanged, and the model was told the reason. " +
			turnNote(c, proven("midTurn"), proven("endOfTurn")),
	}
	if live {
		rec.Note += " Interactive in tmux and idle, the session started a turn by itself when acc pushed a question through " + liveTransportOf(c) +
			"; the model received acc's frame whole and the turn's projection did not repeat it."
	}
	path := filepath.Join(module, "evidence", c.Version+".json")
	return path, writePretty(path, rec)
}

// fileTool names the client's file-writing tool as the tests call it.
func fileTool(c Client) string {
	switch c.Name {
	case "claude":
		return "Write tool"
	case "codex":
		return "apply_patch edit (run through exec_command, seen by the hook as Bash)"
	case "gemini":
		return "write_file tool"
	case "kimi":
		return "Write tool"
	case "copilot":
		return "create tool (seen by the hook as Write)"
	case "qwen":
		return "write_file tool"
	case "opencode", "kilo", "pi":
		return "write tool"
	case "droid":
		return "Create tool"
	}
	return "file-write tool"
}

// reproduces checks what adaptertest.CheckEvidence will require of the
// written record: the recorded payload normalises to a call of the kind the
// capability is about, and the adapter, given it and the marker, renders
// exactly the answer acc-hook gave.
func reproduces(a adapter.Adapter, capability string, rec HookRecord, r adaptertest.Response) error {
	ev, err := classify(a, capability, rec)
	if err != nil {
		return err
	}
	var out adapter.Output
	switch r.Purpose {
	case "inject":
		want := adapter.BeforeTurn
		if capability == "midTurn" {
			want = adapter.AfterTool
		}
		if ev.Kind != want {
			return fmt.Errorf("an inject proof for %s on %s, which is no %s event", capability, rec.Event, want)
		}
		out = a.Inject(ev, r.Marker)
	case "push":
		if ev.Kind != adapter.BeforeTurn || !strings.Contains(ev.Prompt, r.Marker) {
			return fmt.Errorf("a push proof on %s whose prompt does not carry the frame", rec.Event)
		}
		return nil
	case "hold":
		if ev.Kind != adapter.TurnEnd {
			return fmt.Errorf("a hold proof on %s, which is no turn-end event", rec.Event)
		}
		out = a.Hold(ev, r.Marker)
	case "deny":
		if ev.Kind != adapter.BeforeTool {
			return fmt.Errorf("a deny proof on %s, which is no pre-tool event", rec.Event)
		}
		out = a.Deny(ev, r.Marker)
	}
	if out.ExitCode != r.ExitCode || strings.TrimSpace(string(out.Stdout)) != strings.TrimSpace(r.Stdout) ||
		strings.TrimSpace(string(out.Stderr)) != strings.TrimSpace(r.Stderr) {
		return fmt.Errorf("the adapter renders %q / %q / exit %d, acc-hook answered %q / %q / exit %d",
			out.Stdout, out.Stderr, out.ExitCode, r.Stdout, r.Stderr, r.ExitCode)
	}
	return nil
}

// classify normalises the payload a proof rests on and checks that the
// adapter sees the call the capability is about: a file-writing tool for
// guardFiles, the shell for guardShell.
func classify(a adapter.Adapter, capability string, rec HookRecord) (*adapter.Event, error) {
	ev, err := a.Normalize(rec.Event, rec.Stdin)
	if err != nil {
		return nil, fmt.Errorf("the recorded %s payload does not normalise: %w", rec.Event, err)
	}
	switch {
	case capability == "guardFiles" && !ev.Write:
		return nil, fmt.Errorf("the denied %s call (tool %q) is no file-writing tool to the %s adapter", rec.Event, ev.Tool, a.ID())
	case capability == "guardShell" && ev.Shell == "":
		return nil, fmt.Errorf("the denied %s call (tool %q) is no shell call to the %s adapter", rec.Event, ev.Tool, a.ID())
	}
	return ev, nil
}

// envReport lists what the client set in its hooks' environment (names
// only; values are never kept).
func envReport(o *clientObservations, a adapter.Adapter) any {
	type variable struct {
		Name            string   `json:"name"`
		Events          []string `json:"events"`
		EqualsSessionID bool     `json:"equalsPayloadSessionId"`
	}
	vars := []variable{}
	var sessionVars []string
	for name, v := range o.env {
		var events []string
		for _, e := range o.client.Events() {
			if v.events[e] {
				events = append(events, e)
			}
		}
		same := v.equalsSessionID && !v.differsSessionID
		vars = append(vars, variable{Name: name, Events: events, EqualsSessionID: same})
		if same {
			sessionVars = append(sessionVars, name)
		}
	}
	slices.SortFunc(vars, func(x, y variable) int { return strings.Compare(x.Name, y.Name) })
	sort.Strings(sessionVars)
	return map[string]any{
		"client":  a.DisplayName(),
		"version": o.client.Version,
		"recorded": "Variables whose names begin with " + strings.Join(ClientEnvPrefixes, ", ") + " that reached the hooks although the test did not set them, " +
			"i.e. the client set them. Values are not kept; equalsPayloadSessionId says whether the value was the payload's session_id on every event.",
		"setByClient":        vars,
		"sessionIdVariables": nonNilStrings(sessionVars),
	}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writePretty writes v as indented JSON without HTML escaping.
func writePretty(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// finishTurnEvidence is finishEvidence under UpdateTurnEvidenceEnv: after a
// passing run, each client whose midTurn and endOfTurn were both proven
// gets them added to its existing record (mergeTurnEvidence).
func finishTurnEvidence(code int) int {
	if code != 0 {
		fmt.Fprintf(os.Stderr, "%s=1: tests failed, the evidence was not changed\n", UpdateTurnEvidenceEnv)
		return code
	}
	names := make([]string, 0, len(observation))
	for n := range observation {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		fmt.Fprintf(os.Stderr, "%s=1: no client was measured (run TestMidTurn); the evidence was not changed\n", UpdateTurnEvidenceEnv)
		return 1
	}
	for _, n := range names {
		path, err := mergeTurnEvidence(observation[n], time.Now().UTC())
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s=1: %s: %v\n", UpdateTurnEvidenceEnv, n, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "%s=1: added midTurn and endOfTurn to %s\n", UpdateTurnEvidenceEnv, path)
	}
	return code
}

// mergeTurnEvidence adds midTurn and endOfTurn to the client version's
// existing record: the two capabilities set, the proving test named, the
// answers and their payloads added to evidence/<version>/ (replacing
// earlier answers for the same capabilities). A version with no record yet
// needs the whole package run under UpdateEvidenceEnv.
func mergeTurnEvidence(o *clientObservations, now time.Time) (string, error) {
	c := o.client
	a := clients.Get(c.Name)
	for _, n := range turnCaps {
		if p, ok := o.proofs[n]; !ok || !p.OK {
			return "", fmt.Errorf("%s@%s: %s not proven in this run", c.Name, c.Version, n)
		}
	}
	module := filepath.Join("..", "..", "pkg", "adapters", c.Name)
	path := filepath.Join(module, "evidence", c.Version+".json")
	dir := filepath.Join(module, "evidence", c.Version)
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("no record to add to (run the whole package with %s=1): %w", UpdateEvidenceEnv, err)
	}
	var rec adapter.Evidence
	if err := json.Unmarshal(raw, &rec); err != nil {
		return "", err
	}
	var obs adaptertest.Observations
	if b, err := os.ReadFile(filepath.Join(dir, "observations.json")); err != nil {
		return "", err
	} else if err := json.Unmarshal(b, &obs); err != nil {
		return "", err
	}
	kept := obs.Responses[:0]
	for _, r := range obs.Responses {
		if !strings.HasSuffix(r.Payload, "-midTurn.json") && !strings.HasSuffix(r.Payload, "-endOfTurn.json") {
			kept = append(kept, r)
		}
	}
	obs.Responses = kept
	var tests []string
	for _, n := range turnCaps {
		p := o.proofs[n]
		if !slices.Contains(tests, p.Test) {
			tests = append(tests, p.Test)
		}
		name := p.Record.Event + "-" + n + ".json"
		var b bytes.Buffer
		if err := json.Indent(&b, p.Record.Stdin, "", "  "); err != nil {
			return "", fmt.Errorf("payload %s: %w", name, err)
		}
		b.WriteByte('\n')
		if err := os.WriteFile(filepath.Join(dir, "payloads", name), b.Bytes(), 0o644); err != nil {
			return "", err
		}
		resp := adaptertest.Response{Purpose: p.Purpose, Event: p.Record.Event, Payload: name,
			Stdout: strings.TrimRight(p.Record.Stdout, "\n"), Stderr: strings.TrimRight(p.Record.Stderr, "\n"),
			ExitCode: p.Record.Exit, Marker: p.Marker, Effect: p.Effect, Seen: p.Seen}
		if err := reproduces(a, n, p.Record, resp); err != nil {
			return "", fmt.Errorf("%s: %w", n, err)
		}
		obs.Responses = append(obs.Responses, resp)
	}
	if i := strings.Index(obs.Note, "; midTurn and endOfTurn by "); i >= 0 {
		obs.Note = obs.Note[:i] + "."
	}
	obs.Note = strings.TrimSuffix(obs.Note, ".") + "; midTurn and endOfTurn by " + strings.Join(tests, ", ") + " (" + UpdateTurnEvidenceEnv + "=1, " + now.Format("2006-01-02") + ")."
	if err := writePretty(filepath.Join(dir, "observations.json"), obs); err != nil {
		return "", err
	}
	rec.Proven.MidTurn, rec.Proven.EndOfTurn = true, true
	if i := strings.Index(rec.Test, "; midTurn and endOfTurn: "); i >= 0 {
		rec.Test = rec.Test[:i]
	}
	rec.Test += "; midTurn and endOfTurn: internal/realclient " + strings.Join(tests, ", ") + " (" + UpdateTurnEvidenceEnv + "=1 go test -run TestMidTurn ./internal/realclient)"
	turnNote := " " + turnEvidenceNote(c)
	if !strings.Contains(rec.Note, turnNote) {
		rec.Note += turnNote
	}
	return path, writePretty(path, rec)
}

// turnNote is what a record's note says about midTurn and endOfTurn, as
// measured: turnEvidenceNote when both were proven.
func turnNote(c Client, midTurn, endOfTurn bool) string {
	if midTurn && endOfTurn {
		return turnEvidenceNote(c)
	}
	var b strings.Builder
	if midTurn {
		b.WriteString("In one long turn, a peer's question acc-hook printed after a tool call (" + c.PostTool + ") reached the model's next request. ")
	} else {
		b.WriteString("A peer's question acc-hook printed after a tool call (" + c.PostTool + ") reached no model request, so midTurn is not proven" +
			map[bool]string{true: " (the client does not wait for that hook)"}[c.PostToolUnawaited] + ". ")
	}
	if endOfTurn {
		b.WriteString("acc-hook's hold of the turn's end (" + c.Stop + ") kept the agent working once with a question that arrived at the last moment.")
	} else {
		b.WriteString("acc-hook's hold of the turn's end (" + c.Stop + ") did not keep the agent working, so endOfTurn is not proven.")
	}
	return b.String()
}

// turnEvidenceNote is what a record's note says midTurn and endOfTurn rest on.
func turnEvidenceNote(c Client) string {
	return "In one long turn, a peer's question acc-hook printed after a tool call (" + c.PostTool + ") reached the model's next request, and its hold of the turn's end (" + c.Stop + ") kept the agent working once with a question that arrived at the last moment."
}

// sessionEndNote is what a record's note says of the session's start and
// end, given the sessionEnd proof: for a client that fires no session end
// headless (Kimi Code, Qwen Code), that it was proven interactively, or not at all.
func sessionEndNote(c Client, p proof) string {
	switch {
	case p.OK && c.SessionEnd == "":
		return "Session start attached an acc session; a headless run fires no session end, but interactively (in tmux, left with /exit) " +
			p.Record.Event + " fired and acc-hook closed the session (" + interactiveSessionEndTest + ")"
	case p.OK:
		return "Session start attached an acc session and session end closed it"
	}
	return "Session start attached an acc session; no session end fired in a headless run, so sessionEnd is not proven"
}

// onlySessionEnd is whether a run under UpdateEvidenceEnv measured a
// client's session end and nothing else (go test -run
// TestSessionEndInteractive): its record is then merged, not rewritten.
func onlySessionEnd(o *clientObservations) bool {
	_, ok := o.proofs["sessionEnd"]
	return ok && len(o.proofs) == 1
}

// mergeSessionEnd adds a session end proven by TestSessionEndInteractive to
// the client version's existing record, keeping every other capability
// and answer: sessionEnd set, the note's sentence about the session's end
// and the proving test replaced, the SessionEnd payload added to
// evidence/<version>/payloads and to the events observations.json lists as
// fired. A version with no record yet needs the whole package run.
func mergeSessionEnd(o *clientObservations, now time.Time) (string, error) {
	c := o.client
	p := o.proofs["sessionEnd"]
	if !p.OK {
		return "", fmt.Errorf("%s@%s: sessionEnd not proven in this run", c.Name, c.Version)
	}
	rec, ok := o.fired[p.Record.Event]
	if !ok {
		return "", fmt.Errorf("sessionEnd rests on %s, whose payload was not kept", p.Record.Event)
	}
	module := filepath.Join("..", "..", "pkg", "adapters", c.Name)
	path := filepath.Join(module, "evidence", c.Version+".json")
	dir := filepath.Join(module, "evidence", c.Version)
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("no record to add to (run the whole package with %s=%s): %w", UpdateEvidenceEnv, c.Name, err)
	}
	var ev adapter.Evidence
	if err := json.Unmarshal(raw, &ev); err != nil {
		return "", err
	}
	var obs adaptertest.Observations
	if b, err := os.ReadFile(filepath.Join(dir, "observations.json")); err != nil {
		return "", err
	} else if err := json.Unmarshal(b, &obs); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, rec.Stdin, "", "  "); err != nil {
		return "", fmt.Errorf("payload %s: %w", p.Record.Event, err)
	}
	b.WriteByte('\n')
	if err := os.WriteFile(filepath.Join(dir, "payloads", p.Record.Event+".json"), b.Bytes(), 0o644); err != nil {
		return "", err
	}
	if !slices.Contains(obs.Fired, p.Record.Event) {
		obs.Fired = append(obs.Fired, p.Record.Event)
	}
	if i := strings.Index(obs.Note, "; sessionEnd by "); i >= 0 {
		obs.Note = obs.Note[:i] + "."
	}
	obs.Note = strings.TrimSuffix(obs.Note, ".") + "; sessionEnd by " + p.Test + " (interactive in tmux, " + UpdateEvidenceEnv + "=" + c.Name + ", " + now.Format("2006-01-02") + ")."
	if err := writePretty(filepath.Join(dir, "observations.json"), obs); err != nil {
		return "", err
	}
	before := sessionEndNote(c, proof{})
	after := sessionEndNote(c, p)
	switch {
	case strings.Contains(ev.Note, before):
		ev.Note = strings.Replace(ev.Note, before, after, 1)
	case !strings.Contains(ev.Note, after):
		return "", fmt.Errorf("%s: the note says nothing of the session's end that could be replaced (rerun the whole package)", path)
	}
	ev.Proven.SessionEnd = true
	if i := strings.Index(ev.Test, "; sessionEnd: "); i >= 0 {
		ev.Test = ev.Test[:i]
	}
	ev.Test += "; sessionEnd: " + evidence.RealClientTest + p.Test + " (" + UpdateEvidenceEnv + "=" + c.Name + " go test -run " + interactiveSessionEndTest + " ./internal/realclient)"
	return path, writePretty(path, ev)
}
