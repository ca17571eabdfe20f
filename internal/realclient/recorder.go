package realclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// RecorderArg is the first argument that turns a program calling
// RecorderMain into the hook recorder: `<program> acc-hook-recorder <dir>
// <client> <event> [-- <hook command>...]`.
const RecorderArg = "acc-hook-recorder"

// A HookRecord is one hook firing as the recorder saw it.
type HookRecord struct {
	Client string            `json:"client"`
	Event  string            `json:"event"`
	Args   []string          `json:"args"`
	Dir    string            `json:"cwd"`
	Env    map[string]string `json:"env"`
	Stdin  json.RawMessage   `json:"stdin"` // the payload; a JSON string when it was not JSON
	Time   time.Time         `json:"time"`
	// What the recorder answered the client (its own response, or the
	// wrapped hook's).
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	Exit   int    `json:"exit"`
}

// Payload decodes the hook's stdin into a map (nil if it was not an object).
func (r HookRecord) Payload() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Stdin, &m)
	return m
}

// A HookResponse is what the recorder prints and exits with for one event.
type HookResponse struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	Exit   int    `json:"exit"`
}

// RecorderCommand returns the hook command line for each event: program (an
// executable that calls RecorderMain, such as a test binary) run as the
// recorder for client, logging into dir. With wrap, the recorder runs the
// real hook `wrap(event)` (argv) on the same payload and passes its answer on,
// recording it too.
func RecorderCommand(program, dir, client string, wrap func(event string) []string) func(event string) string {
	return func(event string) string {
		words := []string{program, RecorderArg, dir, client, event}
		if wrap != nil {
			words = append(append(words, "--"), wrap(event)...)
		}
		for i, w := range words {
			words[i] = ShellQuote(w)
		}
		return strings.Join(words, " ")
	}
}

// SetHookResponse makes the recorder logging into dir answer client's event
// with resp from now on.
func SetHookResponse(dir, client, event string, resp HookResponse) error {
	b, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "respond"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "respond", client+"."+event+".json"), b, 0o644)
}

// SetHookResponseOnce makes the recorder answer client's next firing of event
// with resp, and only that one; later firings get the standing answer
// (SetHookResponse, the wrapped hook, or nothing).
func SetHookResponseOnce(dir, client, event string, resp HookResponse) error {
	b, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "respond"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "respond", client+"."+event+".once.json"), b, 0o644)
}

// ReadHookLog returns the records the recorder logged into dir, in the
// order the hooks were called (HookRecord.Time). A client that runs two
// hooks at once (Copilot CLI starts UserPromptSubmit while SessionStart
// still runs) may finish them in the other order, which is the order of
// the log's lines.
func ReadHookLog(dir string) ([]HookRecord, error) {
	f, err := os.Open(filepath.Join(dir, "hooks.jsonl"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []HookRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r HookRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, fmt.Errorf("hook log line %d: %w", len(out)+1, err)
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b HookRecord) int { return a.Time.Compare(b.Time) })
	return out, sc.Err()
}

// ClientEnvPrefixes begin the names of the variables a client may set for
// its hooks, which the recorder keeps (and the evidence lists).
var ClientEnvPrefixes = []string{"CLAUDE", "CODEX", "GEMINI", "KIMI", "COPILOT", "QWEN", "OPENCODE", "KILO", "FACTORY", "DROID", "PI_"}

// RecorderMain is the hook recorder: args are <dir> <client> <event>
// [-- <hook command>...]. It reads the payload, decides the answer —
// <dir>/respond/<client>.<event>.once.json when present (used once, then
// set aside), else <dir>/respond/<client>.<event>.json when present, else the wrapped hook's
// stdout, stderr and exit code, else nothing and 0 — appends one HookRecord
// line (payload, argv, working directory, the environment variables named
// by ClientEnvPrefixes, ACC_*, XDG_* and HOME with credentials redacted, and the answer) to
// <dir>/hooks.jsonl, and then gives the answer.
func RecorderMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var wrapped []string
	for i, a := range args {
		if a == "--" {
			args, wrapped = args[:i], args[i+1:]
			break
		}
	}
	if len(args) != 3 {
		fmt.Fprintln(stderr, "usage: acc-hook-recorder <dir> <client> <event> [-- <hook command>...]")
		return 0
	}
	dir, client, event := args[0], args[1], args[2]
	in, _ := io.ReadAll(io.LimitReader(stdin, 64<<20))
	rec := HookRecord{Client: client, Event: event, Args: os.Args, Env: map[string]string{}, Time: time.Now().UTC()}
	rec.Dir, _ = os.Getwd()
	if json.Valid(in) {
		rec.Stdin = in
	} else {
		rec.Stdin, _ = json.Marshal(string(in))
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		for _, p := range append(slices.Clone(ClientEnvPrefixes), "ACC_", "XDG_", "HOME") {
			if strings.HasPrefix(k, p) {
				if secretName(k) {
					v = "<redacted>"
				}
				rec.Env[k] = v
			}
		}
	}

	var resp HookResponse
	if b, ok := takeOnce(filepath.Join(dir, "respond", client+"."+event+".once.json")); ok {
		if err := json.Unmarshal(b, &resp); err != nil {
			resp = HookResponse{Stderr: "acc-hook-recorder: bad response file: " + err.Error() + "\n"}
		}
	} else if b, err := os.ReadFile(filepath.Join(dir, "respond", client+"."+event+".json")); err == nil {
		if err := json.Unmarshal(b, &resp); err != nil {
			resp = HookResponse{Stderr: "acc-hook-recorder: bad response file: " + err.Error() + "\n"}
		}
	} else if len(wrapped) > 0 {
		resp = runWrapped(wrapped, in)
	}
	rec.Stdout, rec.Stderr, rec.Exit = resp.Stdout, resp.Stderr, resp.Exit

	line, _ := json.Marshal(rec)
	f, err := os.OpenFile(filepath.Join(dir, "hooks.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "acc-hook-recorder:", err)
	}
	_, _ = io.WriteString(stdout, resp.Stdout)
	_, _ = io.WriteString(stderr, resp.Stderr)
	return resp.Exit
}

// takeOnce claims a one-shot response file: it renames it aside (so of two
// hooks firing at once only one gets it) and returns its content.
func takeOnce(path string) ([]byte, bool) {
	taken := path + ".taken"
	if os.Rename(path, taken) != nil {
		return nil, false
	}
	b, err := os.ReadFile(taken)
	return b, err == nil
}

// runWrapped runs the real hook on the payload and returns its answer; a hook
// that cannot be started answers exit 1 with the reason on stderr.
func runWrapped(argv []string, payload []byte) HookResponse {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	resp := HookResponse{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		resp.Exit = ee.ExitCode()
	case err != nil:
		resp.Stderr += "acc-hook-recorder: " + err.Error() + "\n"
		resp.Exit = 1
	}
	return resp
}

func secretName(k string) bool {
	u := strings.ToUpper(k)
	for _, s := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD"} {
		if strings.Contains(u, s) {
			return true
		}
	}
	return false
}

// Events returns the event names of the records, in order.
func Events(recs []HookRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Event
	}
	return out
}
