package cli_test

// The CLI contract tests: one short txtar script per behaviour under
// testdata/script, run by testscript with `acc` registered as a command that
// re-executes this test binary and calls cli.Main, the real entry point
// behind a three-line main.
//
// Every script starts in $WORK/repo, a real Git repository with one commit,
// with HOME=$WORK/home and ACC_DATA_HOME=$WORK/data (outside the repository).
// testscript gives each script a fresh environment, so no ACC_SESSION,
// ACC_GENERATION, XDG_* or client session id of the developer's shell reaches
// acc.
//
// Custom commands (see scriptCmds) assert what `exec` cannot: exact exit
// codes, JSON envelopes and key sets, and that a refused command left the
// store untouched.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/cli"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"acc": func() { os.Exit(cli.Main(os.Args[1:], cli.DefaultEnv())) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		Setup:               setupScript,
		Cmds:                scriptCmds,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Condition:           scriptCondition,
	})
}

// bashCompletion is where Debian, Ubuntu and Fedora keep the
// bash-completion package's main script.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// scriptCondition adds [bash-completion]: the bash-completion package is
// installed (completion.txtar drives acc's bash script with and without it).
//
// [pg]: a PostgreSQL test server is there (ACC_TEST_PG_URL, from
// scripts/with-pg.sh); with ACC_REQUIRE_PG=1 its absence is an error, so a
// script cannot skip its PostgreSQL half silently.
func scriptCondition(cond string) (bool, error) {
	if cond == "bash-completion" {
		_, err := os.Stat(bashCompletion)
		return err == nil, nil
	}
	if cond == "pg" {
		if os.Getenv("ACC_TEST_PG_URL") == "" && os.Getenv("ACC_REQUIRE_PG") == "1" {
			return false, fmt.Errorf("[pg]: ACC_TEST_PG_URL is empty and ACC_REQUIRE_PG=1: run the tests through scripts/with-pg.sh (make test does)")
		}
		return os.Getenv("ACC_TEST_PG_URL") != "", nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// setupScript gives every script a home, a data home outside the workspace,
// a Git identity, and a real repository at $WORK/repo as its directory.
func setupScript(env *testscript.Env) error {
	work := env.WorkDir
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env.Setenv("HOME", home)
	env.Setenv("ACC_DATA_HOME", filepath.Join(work, "data"))
	// ACCBIN is the directory testscript put the acc command in (the first
	// PATH entry), so a script can run with a PATH of its own choosing.
	env.Setenv("ACCBIN", filepath.SplitList(env.Getenv("PATH"))[0])
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	// The PostgreSQL test server, and the password file its role's
	// password is in ([pg] scripts).
	for _, k := range []string{"ACC_TEST_PG_URL", "PGPASSFILE"} {
		if v := os.Getenv(k); v != "" {
			env.Setenv(k, v)
		}
	}
	env.Setenv("GIT_AUTHOR_NAME", "acc test")
	env.Setenv("GIT_AUTHOR_EMAIL", "acc@example.invalid")
	env.Setenv("GIT_COMMITTER_NAME", "acc test")
	env.Setenv("GIT_COMMITTER_EMAIL", "acc@example.invalid")
	repo := filepath.Join(work, "repo")
	if err := makeRepo(repo, env.Vars); err != nil {
		return err
	}
	env.Cd = repo
	env.Values[stateKey{}] = &scriptState{}
	return nil
}

type stateKey struct{}

// scriptState is what custom commands keep between lines of one script.
type scriptState struct {
	lockDB   *sql.DB
	lockConn *sql.Conn
	// procs are the processes spawn started, by variable name.
	procs map[string]*exec.Cmd
	// snaps are pathsnap's path sets, by name.
	snaps map[string]map[string]bool
}

func state(ts *testscript.TestScript) *scriptState { return ts.Value(stateKey{}).(*scriptState) }

// makeRepo creates a Git repository with one empty commit at dir.
func makeRepo(dir string, vars []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"commit", "-q", "--allow-empty", "-m", "init"},
	} {
		c := exec.Command("git", append([]string{"-C", dir}, args...)...)
		c.Env = vars
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"exitcode":    cmdExitcode,
	"attach":      cmdAttach,
	"envelope":    cmdEnvelope,
	"oneline":     cmdOneline,
	"jsonget":     cmdJSONGet,
	"jsonis":      cmdJSONIs,
	"jsonkeys":    cmdJSONKeys,
	"jsonlen":     cmdJSONLen,
	"storefp":     cmdStoreFP,
	"storesame":   cmdStoreSame,
	"events":      cmdEvents,
	"receipt":     cmdReceipt,
	"filehash":    cmdFileHash,
	"filesame":    cmdFileSame,
	"treehash":    cmdTreeHash,
	"treesame":    cmdTreeSame,
	"userver":     cmdUserVersion,
	"truncfile":   cmdTruncFile,
	"checkpoint":  cmdCheckpoint,
	"damage":      cmdDamage,
	"wsid":        cmdWorkspaceID,
	"mkrepo":      cmdMkrepo,
	"envq":        cmdEnvq,
	"repeat":      cmdRepeat,
	"suggested":   cmdSuggested,
	"spawn":       cmdSpawn,
	"pathsnap":    cmdPathSnap,
	"removedlist": cmdRemovedList,
	"reap":        cmdReap,
	"nostorefile": cmdNoStoreFile,
	"pgdrop":      cmdPGDrop,
	"lockstore":   cmdLockStore,
	"unlockstore": cmdUnlockStore,
	"activity":    cmdActivity,
	"declare":     cmdDeclare,
}

func noNeg(ts *testscript.TestScript, neg bool, name string) {
	if neg {
		ts.Fatalf("%s does not support !", name)
	}
}

// exitcode N prog args... runs prog like exec and asserts its exit status is
// exactly N; stdout and stderr are kept for the following commands.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "exitcode")
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// attach NAME PARTICIPANT [HARNESS [DIR]] runs `acc attach --json` (in DIR
// via --cwd when given) and sets $NAME_S and $NAME_G to the session id and
// generation it printed.
func cmdAttach(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "attach")
	if len(args) < 2 || len(args) > 4 {
		ts.Fatalf("usage: attach NAME PARTICIPANT [HARNESS [DIR]]")
	}
	argv := []string{"attach", "--json", "--participant", args[1]}
	if len(args) > 2 {
		argv = append(argv, "--harness", args[2])
	}
	if len(args) > 3 {
		argv = append(argv, "--cwd", args[3])
	}
	if err := ts.Exec("acc", argv...); err != nil {
		ts.Fatalf("acc attach: %v", err)
	}
	env := readEnvelope(ts)
	if !env.OK {
		ts.Fatalf("acc attach failed")
	}
	data, _ := env.Data.(map[string]any)
	s, _ := data["sessionId"].(string)
	g, _ := data["generation"].(string)
	if s == "" || g == "" {
		ts.Fatalf("acc attach printed no sessionId/generation")
	}
	ts.Setenv(args[0]+"_S", s)
	ts.Setenv(args[0]+"_G", g)
}

type envelope struct {
	EnvelopeVersion int             `json:"envelope_version"`
	OK              bool            `json:"ok"`
	Data            any             `json:"data"`
	Error           json.RawMessage `json:"error"`
	raw             map[string]any
}

// readEnvelope decodes stdout as exactly one JSON object and nothing else.
func readEnvelope(ts *testscript.TestScript) envelope {
	out := ts.ReadFile("stdout")
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		ts.Fatalf("stdout is not one JSON object: %v", err)
	}
	if rest := strings.TrimSpace(out[dec.InputOffset():]); rest != "" {
		ts.Fatalf("stdout holds more than one JSON value; after it: %q", clip(rest))
	}
	var env envelope
	ts.Check(json.Unmarshal([]byte(out), &env))
	env.raw = raw
	return env
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// envelope ok
// envelope fail CODE REASON
//
// asserts that stdout is exactly one --json envelope: version 1, the ok flag,
// exactly the keys of its kind; a failure has code CODE, details.reasonCode
// REASON and a one-line message. stderr must be empty: with --json every
// word acc says is in the envelope.
func cmdEnvelope(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "envelope")
	if !(len(args) == 1 && args[0] == "ok") && !(len(args) == 3 && args[0] == "fail") {
		ts.Fatalf("usage: envelope ok | envelope fail CODE REASON")
	}
	env := readEnvelope(ts)
	if env.EnvelopeVersion != 1 {
		ts.Fatalf("envelope_version = %d, want 1", env.EnvelopeVersion)
	}
	if s := ts.ReadFile("stderr"); s != "" {
		ts.Fatalf("--json run wrote to stderr: %q", clip(s))
	}
	if args[0] == "ok" {
		if !env.OK {
			ts.Fatalf("ok = false, want true")
		}
		assertKeys(ts, "envelope", env.raw, "envelope_version", "ok", "data")
		return
	}
	if env.OK {
		ts.Fatalf("ok = true, want false")
	}
	assertKeys(ts, "envelope", env.raw, "envelope_version", "ok", "error")
	e, _ := env.raw["error"].(map[string]any)
	assertKeys(ts, "error", e, "code", "message", "details")
	if got := fmt.Sprint(e["code"]); got != args[1] {
		ts.Fatalf("error.code = %s, want %s", got, args[1])
	}
	msg, _ := e["message"].(string)
	if msg == "" || strings.ContainsAny(msg, "\r\n") {
		ts.Fatalf("error.message must be one non-empty line, got %q", msg)
	}
	if protocol.Unrendered(msg) {
		ts.Fatalf("error.message holds a field or step the CLI did not word: %q", msg)
	}
	d, _ := e["details"].(map[string]any)
	if got := fmt.Sprint(d["reasonCode"]); got != args[2] {
		ts.Fatalf("error.details.reasonCode = %s, want %s", got, args[2])
	}
	info, ok := protocol.LookupReason(args[2])
	if !ok {
		ts.Fatalf("reason %s is not in protocol.Reasons", args[2])
	}
	if strconv.Itoa(int(info.Code)) != args[1] {
		ts.Fatalf("reason %s has exit %d in protocol.Reasons, script expects %s", args[2], info.Code, args[1])
	}
}

// oneline asserts the text-mode refusal shape: nothing on stdout and exactly
// one line on stderr, starting "acc: ".
func cmdOneline(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "oneline")
	if out := ts.ReadFile("stdout"); out != "" {
		ts.Fatalf("refusal wrote to stdout: %q", clip(out))
	}
	errText := ts.ReadFile("stderr")
	if !strings.HasPrefix(errText, "acc: ") || !strings.HasSuffix(errText, "\n") || strings.Count(errText, "\n") != 1 {
		ts.Fatalf("stderr is not one line starting \"acc: \": %q", clip(errText))
	}
	if protocol.Unrendered(errText) {
		ts.Fatalf("the refusal holds a field or step the CLI did not word: %q", clip(errText))
	}
}

// lookup walks a dotted path (object keys, array indexes) from the decoded
// stdout; "." is the whole document.
func lookup(ts *testscript.TestScript, path string) any {
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile("stdout")))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("stdout is not JSON: %v", err)
	}
	if path == "." {
		return v
	}
	for _, seg := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[seg]
			if !ok {
				ts.Fatalf("%s: no key %q", path, seg)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				ts.Fatalf("%s: no index %q in an array of %d", path, seg, len(c))
			}
			v = c[i]
		default:
			ts.Fatalf("%s: %q is below a scalar", path, seg)
		}
	}
	return v
}

// render prints a scalar the way scripts write it: strings bare, null as
// null, numbers and booleans as JSON.
func render(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// jsonget VAR PATH sets $VAR to the scalar at PATH of stdout.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "jsonget")
	if len(args) != 2 {
		ts.Fatalf("usage: jsonget VAR PATH")
	}
	ts.Setenv(args[0], render(lookup(ts, args[1])))
}

// [!] jsonis PATH VALUE asserts the scalar at PATH of stdout renders as VALUE.
func cmdJSONIs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonis PATH VALUE")
	}
	got := render(lookup(ts, args[0]))
	if (got == args[1]) == neg {
		if neg {
			ts.Fatalf("%s = %q, want anything else", args[0], got)
		}
		ts.Fatalf("%s = %q, want %q", args[0], got, args[1])
	}
}

// jsonkeys PATH KEY... asserts the object at PATH of stdout has exactly these
// keys: the --json field set is a contract (docs/protocol.md#output-envelope).
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "jsonkeys")
	if len(args) < 1 {
		ts.Fatalf("usage: jsonkeys PATH KEY...")
	}
	obj, ok := lookup(ts, args[0]).(map[string]any)
	if !ok {
		ts.Fatalf("%s is not an object", args[0])
	}
	assertKeys(ts, args[0], obj, args[1:]...)
}

func assertKeys(ts *testscript.TestScript, what string, obj map[string]any, want ...string) {
	var got []string
	for k := range obj {
		got = append(got, k)
	}
	sort.Strings(got)
	want = slices.Clone(want)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		ts.Fatalf("%s has keys %v, want %v", what, got, want)
	}
}

// jsonlen PATH N asserts the array at PATH of stdout has N elements.
func cmdJSONLen(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "jsonlen")
	if len(args) != 2 {
		ts.Fatalf("usage: jsonlen PATH N")
	}
	arr, ok := lookup(ts, args[0]).([]any)
	if !ok {
		ts.Fatalf("%s is not an array", args[0])
	}
	if strconv.Itoa(len(arr)) != args[1] {
		ts.Fatalf("%s has %d elements, want %s", args[0], len(arr), args[1])
	}
}

// storePath returns the database named by args (one optional path) or the
// only acc.db under $ACC_DATA_HOME/acc/workspaces/*/.
func storePath(ts *testscript.TestScript, args []string) string {
	if len(args) > 0 && strings.HasPrefix(args[0], pgStorePrefix) {
		return args[0]
	}
	if len(args) > 0 {
		return ts.MkAbs(args[0])
	}
	home := ts.Getenv("ACC_DATA_HOME")
	matches, err := filepath.Glob(filepath.Join(home, "acc", "workspaces", "*", "acc.db"))
	ts.Check(err)
	if len(matches) != 1 {
		ts.Fatalf("want exactly one store under %s, found %d", home, len(matches))
	}
	return matches[0]
}

// openStore opens a store through pkg/storage; the workspace id is the name
// of the directory holding it (workspace.StorePath).
func openStore(ts *testscript.TestScript, path string) *storage.SQLite {
	if _, err := os.Stat(path); err != nil {
		ts.Fatalf("no store: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := storage.OpenSQLite(ctx, path, filepath.Base(filepath.Dir(path)))
	if err != nil {
		ts.Fatalf("open store %s: %v", path, err)
	}
	return st
}

func fingerprint(ts *testscript.TestScript, path string) string {
	if dir, ok := strings.CutPrefix(path, pgStorePrefix); ok {
		return pgFingerprint(ts, dir)
	}
	st := openStore(ts, path)
	defer st.Close()
	fp, err := st.Fingerprint(context.Background())
	ts.Check(err)
	return fp
}

// pgStorePrefix marks a storefp/storesame argument "pg:DIR": the room
// that DIR's workspace has on the PostgreSQL test server.
const pgStorePrefix = "pg:"

// pgRoom opens the room of DIR's workspace on the test server without
// creating it (nil when it has no tables yet), and the workspace id.
func pgRoom(ts *testscript.TestScript, dir string) (*storage.Postgres, string) {
	url := ts.Getenv("ACC_TEST_PG_URL")
	if url == "" {
		ts.Fatalf("no PostgreSQL test server: guard the line with [pg]")
	}
	ws, err := workspace.Discover(context.Background(), workspace.DiscoverOptions{Cwd: ts.MkAbs(dir), Getenv: ts.Getenv})
	ts.Check(err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pg, err := storage.OpenPostgres(ctx, url, ws.ID, storage.PostgresOptions{NoCreate: true})
	if errors.Is(err, storage.ErrRoomNotCreated) {
		return nil, ws.ID
	}
	ts.Check(err)
	return pg, ws.ID
}

// pgFingerprint is the fingerprint of DIR's room on the test server, or
// "none" while it has no tables.
func pgFingerprint(ts *testscript.TestScript, dir string) string {
	pg, _ := pgRoom(ts, dir)
	if pg == nil {
		return "none"
	}
	defer pg.Close()
	fp, err := pg.Fingerprint(context.Background())
	ts.Check(err)
	return fp
}

// pgdrop DIR drops the room of DIR's workspace from the PostgreSQL test
// server when the script ends (and at once if it exists already), so
// scripts leave the shared server as they found it.
func cmdPGDrop(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "pgdrop")
	if len(args) != 1 {
		ts.Fatalf("usage: pgdrop DIR")
	}
	pg, id := pgRoom(ts, args[0])
	if pg != nil {
		err := pg.Drop(context.Background())
		pg.Close()
		ts.Check(err)
	}
	url := ts.Getenv("ACC_TEST_PG_URL")
	ts.Defer(func() {
		// After the script: no Fatalf here, and nothing to undo if the
		// room was never made.
		if pg, err := storage.OpenPostgres(context.Background(), url, id, storage.PostgresOptions{NoCreate: true}); err == nil {
			pg.Drop(context.Background())
			pg.Close()
		}
	})
}

// storefp NAME [DB] saves the store's fingerprint (every row of every table)
// in $NAME; DB "pg:DIR" names DIR's room on the PostgreSQL test server
// ("none" while it has no tables).
func cmdStoreFP(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "storefp")
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: storefp NAME [DB]")
	}
	ts.Setenv(args[0], fingerprint(ts, storePath(ts, args[1:])))
}

// storesame NAME [DB] asserts the store's fingerprint still equals $NAME.
func cmdStoreSame(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "storesame")
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: storesame NAME [DB]")
	}
	want := ts.Getenv(args[0])
	if want == "" {
		ts.Fatalf("$%s is not set; run storefp %s first", args[0], args[0])
	}
	if got := fingerprint(ts, storePath(ts, args[1:])); got != want {
		ts.Fatalf("the store changed (fingerprint %.12s, was %.12s)", got, want)
	}
}

// events N [TYPE] asserts the event log holds N events (of TYPE when given).
func cmdEvents(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "events")
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: events N [TYPE]")
	}
	st := openStore(ts, storePath(ts, nil))
	defer st.Close()
	n := 0
	var types []string
	ts.Check(st.View(context.Background(), func(tx storage.ReadTx) error {
		evs, err := tx.Events(0, 1_000_000)
		for _, e := range evs {
			types = append(types, e.Type)
			if len(args) == 1 || e.Type == args[1] {
				n++
			}
		}
		return err
	}))
	if strconv.Itoa(n) != args[0] {
		ts.Fatalf("%d matching events, want %s (log: %v)", n, args[0], types)
	}
}

// receipt MESSAGE PARTICIPANT STATE asserts the stored receipt's state, read
// without going through acc (an exact read would move it).
func cmdReceipt(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "receipt")
	if len(args) != 3 {
		ts.Fatalf("usage: receipt MESSAGE PARTICIPANT STATE")
	}
	st := openStore(ts, storePath(ts, nil))
	defer st.Close()
	var got string
	ts.Check(st.View(context.Background(), func(tx storage.ReadTx) error {
		rc, err := tx.Receipt(args[0], args[1])
		if rc != nil {
			got = rc.State
		}
		return err
	}))
	if got != args[2] {
		ts.Fatalf("receipt of %s for %s is %q, want %q", args[0], args[1], got, args[2])
	}
}

func fileHash(ts *testscript.TestScript, path string) string {
	b, err := os.ReadFile(ts.MkAbs(path))
	ts.Check(err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// filehash NAME FILE saves the SHA-256 of FILE's bytes in $NAME.
func cmdFileHash(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "filehash")
	if len(args) != 2 {
		ts.Fatalf("usage: filehash NAME FILE")
	}
	ts.Setenv(args[0], fileHash(ts, args[1]))
}

// filesame NAME FILE asserts FILE's bytes still hash to $NAME.
func cmdFileSame(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "filesame")
	if len(args) != 2 {
		ts.Fatalf("usage: filesame NAME FILE")
	}
	if got := fileHash(ts, args[1]); got != ts.Getenv(args[0]) {
		ts.Fatalf("%s changed", args[1])
	}
}

// treehash NAME DIR sets $NAME to a hash of every file, directory and
// symlink under DIR: relative path, type, permission bits and bytes.
func cmdTreeHash(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "treehash")
	if len(args) != 2 {
		ts.Fatalf("usage: treehash NAME DIR")
	}
	ts.Setenv(args[0], treeHash(ts, args[1]))
}

// treesame NAME DIR asserts DIR still hashes to $NAME, listing the tree
// when it does not.
func cmdTreeSame(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "treesame")
	if len(args) != 2 {
		ts.Fatalf("usage: treesame NAME DIR")
	}
	if got := treeHash(ts, args[1]); got != ts.Getenv(args[0]) {
		var list []string
		filepath.Walk(ts.MkAbs(args[1]), func(p string, fi os.FileInfo, err error) error {
			if err == nil {
				list = append(list, fmt.Sprintf("%s %v %d", p, fi.Mode(), fi.Size()))
			}
			return nil
		})
		ts.Fatalf("%s changed; it now holds:\n%s", args[1], strings.Join(list, "\n"))
	}
}

func treeHash(ts *testscript.TestScript, dir string) string {
	root := ts.MkAbs(dir)
	h := sha256.New()
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00%v\x00", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%x\x00", sha256.Sum256(b))
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return "absent"
	}
	ts.Check(err)
	return hex.EncodeToString(h.Sum(nil))
}

// pathsnap NAME DIR... records every path (file, directory, link) under
// the DIRs, for removedlist.
func cmdPathSnap(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "pathsnap")
	if len(args) < 2 {
		ts.Fatalf("usage: pathsnap NAME DIR...")
	}
	st := state(ts)
	if st.snaps == nil {
		st.snaps = map[string]map[string]bool{}
	}
	set := map[string]bool{}
	for _, dir := range args[1:] {
		filepath.WalkDir(ts.MkAbs(dir), func(p string, _ os.DirEntry, err error) error {
			if err == nil {
				set[p] = true
			}
			return nil
		})
	}
	st.snaps[args[0]] = set
}

// removedlist NAME asserts that of the paths pathsnap NAME recorded,
// exactly those the previous command's --json install report lists as
// removed whole (op "remove", kind file or directory, in data.clients[].
// changes and data.shared) are gone, and every other one is still there.
func cmdRemovedList(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "removedlist")
	if len(args) != 1 {
		ts.Fatalf("usage: removedlist NAME")
	}
	snap := state(ts).snaps[args[0]]
	if snap == nil {
		ts.Fatalf("removedlist: no pathsnap %s", args[0])
	}
	var rep struct {
		Data struct {
			Clients []struct {
				Changes []struct{ Path, Kind, Op string }
			}
			Shared []struct{ Path, Kind, Op string }
		}
	}
	ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &rep))
	listed := map[string]bool{}
	changes := rep.Data.Shared
	for _, c := range rep.Data.Clients {
		changes = append(changes, c.Changes...)
	}
	for _, ch := range changes {
		if ch.Op == "remove" && (ch.Kind == "file" || ch.Kind == "directory") {
			listed[ch.Path] = true
		}
	}
	if len(listed) == 0 {
		ts.Fatalf("removedlist: the report lists nothing removed")
	}
	var paths []string
	for p := range snap {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		_, err := os.Lstat(p)
		switch gone := errors.Is(err, os.ErrNotExist); {
		case gone && !listed[p]:
			ts.Fatalf("%s is gone, but the report does not list it", p)
		case !gone && listed[p]:
			ts.Fatalf("%s is listed as removed, but it is still there", p)
		}
	}
	for p := range listed {
		if !snap[p] {
			ts.Fatalf("the report lists %s as removed, but it was not there before", p)
		}
	}
}

// userver DB N sets PRAGMA user_version of DB to N with plain SQLite, not
// pkg/storage (which would refuse the result).
func cmdUserVersion(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "userver")
	if len(args) != 2 {
		ts.Fatalf("usage: userver DB N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	db, err := sql.Open("sqlite", "file:"+ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", n))
	ts.Check(err)
	// Fold the WAL back into the main file so the file's bytes are final.
	_, err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	ts.Check(err)
}

// truncfile FILE N|half cuts FILE to N bytes, or to half its size.
func cmdTruncFile(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "truncfile")
	if len(args) != 2 {
		ts.Fatalf("usage: truncfile FILE N|half")
	}
	path := ts.MkAbs(args[0])
	var n int64
	if args[1] == "half" {
		info, err := os.Stat(path)
		ts.Check(err)
		n = info.Size() / 2
	} else {
		v, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		n = v
	}
	ts.Check(os.Truncate(path, n))
}

// checkpoint DB copies the WAL of DB into the main file and empties it, so
// that DB's bytes alone hold the whole store.
func cmdCheckpoint(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "checkpoint")
	if len(args) != 1 {
		ts.Fatalf("usage: checkpoint DB")
	}
	db, err := sql.Open("sqlite", "file:"+ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	var busy, logged, done int
	ts.Check(db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done))
	if busy != 0 {
		ts.Fatalf("checkpoint %s: busy", args[0])
	}
}

// damage DB TABLE KEYCOL KEY overwrites the record of one row with text
// that is not JSON, as a bad disk sector or a stray edit might.
func cmdDamage(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "damage")
	if len(args) != 4 {
		ts.Fatalf("usage: damage DB TABLE KEYCOL KEY")
	}
	db, err := sql.Open("sqlite", "file:"+ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	res, err := db.Exec("UPDATE "+args[1]+" SET record = '{\"schemaVersion\": 3, damaged' WHERE "+args[2]+" = ?", args[3])
	ts.Check(err)
	if n, _ := res.RowsAffected(); n != 1 {
		ts.Fatalf("damage: %d rows match %s = %s in %s", n, args[2], args[3], args[1])
	}
}

// wsid VAR DIR sets $VAR to the id of the workspace governing DIR, found by
// pkg/core's discovery.
func cmdWorkspaceID(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "wsid")
	if len(args) != 2 {
		ts.Fatalf("usage: wsid VAR DIR")
	}
	ws, err := workspace.Discover(context.Background(), workspace.DiscoverOptions{Cwd: ts.MkAbs(args[1]), Getenv: ts.Getenv})
	ts.Check(err)
	ts.Setenv(args[0], ws.ID)
}

// mkrepo DIR creates another Git repository with one commit.
func cmdMkrepo(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "mkrepo")
	if len(args) != 1 {
		ts.Fatalf("usage: mkrepo DIR")
	}
	var vars []string
	for _, k := range []string{"HOME", "PATH", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		vars = append(vars, k+"="+ts.Getenv(k))
	}
	ts.Check(makeRepo(ts.MkAbs(args[0]), vars))
}

// envq VAR 'TEXT' sets $VAR to TEXT with Go escapes (\t, \x01, \u00e9)
// interpreted, for values a script cannot spell literally.
func cmdEnvq(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "envq")
	if len(args) != 2 {
		ts.Fatalf("usage: envq VAR 'TEXT'")
	}
	s, err := strconv.Unquote(`"` + strings.ReplaceAll(args[1], `"`, `\"`) + `"`)
	ts.Check(err)
	ts.Setenv(args[0], s)
}

// suggested VAR PREFIX sets $VAR to the last `…`-quoted command in the
// previous command's stderr that starts with PREFIX, so a script can run
// exactly what acc told the user to run (with `exec sh -c $VAR`).
func cmdSuggested(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "suggested")
	if len(args) != 2 {
		ts.Fatalf("usage: suggested VAR PREFIX")
	}
	parts := strings.Split(ts.ReadFile("stderr"), "`")
	found := ""
	for i := 1; i < len(parts)-1; i += 2 { // the odd parts are quoted
		if strings.HasPrefix(parts[i], args[1]) {
			found = parts[i]
		}
	}
	if found == "" {
		ts.Fatalf("no `%s…` in stderr", args[1])
	}
	ts.Setenv(args[0], found)
}

// spawn VAR starts a process that sleeps for an hour (a stand-in for a
// client's process) and sets $VAR to its pid; reap VAR ends it and waits
// until it is gone (reaped, so no zombie is left to look alive). A process
// the script leaves running is killed when it ends.
func cmdSpawn(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "spawn")
	if len(args) != 1 {
		ts.Fatalf("usage: spawn VAR")
	}
	c := exec.Command("sleep", "3600")
	ts.Check(c.Start())
	st := state(ts)
	if st.procs == nil {
		st.procs = map[string]*exec.Cmd{}
	}
	st.procs[args[0]] = c
	ts.Defer(func() {
		if c.ProcessState == nil {
			c.Process.Kill()
			c.Wait()
		}
	})
	ts.Setenv(args[0], strconv.Itoa(c.Process.Pid))
}

func cmdReap(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "reap")
	if len(args) != 1 {
		ts.Fatalf("usage: reap VAR")
	}
	c := state(ts).procs[args[0]]
	if c == nil {
		ts.Fatalf("reap: no process spawned as %s", args[0])
	}
	ts.Check(c.Process.Kill())
	c.Wait() // killed: the error says so
}

// repeat VAR TEXT N sets $VAR to TEXT repeated N times.
func cmdRepeat(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "repeat")
	if len(args) != 3 {
		ts.Fatalf("usage: repeat VAR TEXT N")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	ts.Setenv(args[0], strings.Repeat(args[1], n))
}

// [!] nostorefile asserts that no file at all exists under $ACC_DATA_HOME/acc
// (with !, that some does).
func cmdNoStoreFile(ts *testscript.TestScript, neg bool, args []string) {
	var files []string
	root := filepath.Join(ts.Getenv("ACC_DATA_HOME"), "acc")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if (len(files) == 0) == neg {
		ts.Fatalf("files under %s: %v", root, files)
	}
}

// lockstore [DB] holds the store's write lock (an open BEGIN IMMEDIATE), as a
// writer in another process would, until unlockstore or the script ends.
func cmdLockStore(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "lockstore")
	st := state(ts)
	if st.lockConn != nil {
		ts.Fatalf("the store is already locked")
	}
	db, err := sql.Open("sqlite", "file:"+storePath(ts, args))
	ts.Check(err)
	conn, err := db.Conn(context.Background())
	ts.Check(err)
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		db.Close()
		ts.Fatalf("lock the store: %v", err)
	}
	st.lockDB, st.lockConn = db, conn
	ts.Defer(func() { releaseLock(st) })
}

// unlockstore releases the lock taken by lockstore.
func cmdUnlockStore(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "unlockstore")
	if state(ts).lockConn == nil {
		ts.Fatalf("the store is not locked")
	}
	ts.Check(releaseLock(state(ts)))
}

func releaseLock(st *scriptState) error {
	if st.lockConn == nil {
		return nil
	}
	_, err := st.lockConn.ExecContext(context.Background(), "ROLLBACK")
	st.lockConn.Close()
	st.lockDB.Close()
	st.lockConn, st.lockDB = nil, nil
	return err
}

// declare SESSION VERSION CAPABILITY... records on SESSION, as a client's
// hook does at attach, its client version and the delivery capabilities
// proven for it (nextTurn, midTurn, endOfTurn, livePush).
func cmdDeclare(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "declare")
	if len(args) < 2 {
		ts.Fatalf("usage: declare SESSION VERSION CAPABILITY...")
	}
	var caps protocol.DeclaredCapabilities
	for _, c := range args[2:] {
		switch c {
		case "nextTurn":
			caps.Delivery.NextTurn = true
		case "midTurn":
			caps.Delivery.MidTurn = true
		case "endOfTurn":
			caps.Delivery.EndOfTurn = true
		case "livePush":
			caps.Delivery.LivePush = true
		default:
			ts.Fatalf("declare: unknown capability %q", c)
		}
	}
	b, err := json.Marshal(caps)
	ts.Check(err)
	var v map[string]any
	ts.Check(json.Unmarshal(b, &v))
	updateSession(ts, args[0], func(s *protocol.Session) {
		s.Extensions[protocol.ExtClientVersion] = args[1]
		s.Extensions[protocol.ExtCapabilities] = v
	})
}

// updateSession changes the stored record of session id in place.
func updateSession(ts *testscript.TestScript, id string, change func(s *protocol.Session)) {
	st := openStore(ts, storePath(ts, nil))
	defer st.Close()
	ts.Check(st.Update(context.Background(), func(tx storage.Tx) error {
		for _, a := range []storage.Area{storage.Durable, storage.Ephemeral} {
			s, err := tx.Session(a, id)
			if err != nil {
				return err
			}
			if s == nil {
				continue
			}
			if s.Extensions == nil {
				s.Extensions = protocol.Extensions{}
			}
			change(s)
			return tx.PutSession(a, s)
		}
		return fmt.Errorf("no session %s", id)
	}))
}

// activity SESSION STATE [AGO] records, as a client's turn hooks do
// (core.Room.SetActivity), that SESSION is working or idle, since AGO (a
// duration, default 0) before now.
func cmdActivity(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "activity")
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: activity SESSION STATE [AGO]")
	}
	var ago time.Duration
	if len(args) == 3 {
		var err error
		ago, err = time.ParseDuration(args[2])
		ts.Check(err)
	}
	updateSession(ts, args[0], func(s *protocol.Session) {
		s.Extensions[protocol.ExtActivity] = map[string]any{"state": args[1], "since": protocol.FormatTime(time.Now().Add(-ago))}
	})
}
