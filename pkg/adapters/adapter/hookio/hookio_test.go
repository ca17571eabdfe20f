package hookio

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/adapters/adapter"
)

var testSpec = &Spec{
	Adapter:       "test",
	Events:        []EventKind{{"Start", adapter.SessionStart}, {"Tool", adapter.BeforeTool}, {"End", adapter.SessionEnd}},
	PayloadEvents: map[string]string{"start": "Start"},
	EventKeys:     []string{"event"},
	SessionKeys:   []string{"sid", "session"},
	CwdKeys:       []string{"cwd"},
	ModelKeys:     []string{"model"},
	SourceKeys:    []string{"source"},
	EndReasonKeys: []string{"reason"},
	ToolKeys:      []string{"tool"},
	InputKeys:     []string{"input"},
	FileTools:     map[string][]string{"write": {"path", "file"}},
	PatchTools:    map[string][]string{"patch": {"body"}},
	ShellTools:    map[string][]string{"sh": {"cmd"}},
	ShellPatches:  true,
}

func TestNormalize(t *testing.T) {
	ev, err := testSpec.Normalize("Start", []byte(`{"event":"start","sid":"s1","cwd":"/w","model":"m","source":"resume","reason":"not on start"}`))
	if err != nil || ev.SessionID != "s1" || ev.Cwd != "/w" || ev.Model != "m" || ev.Source != "resume" || ev.EndReason != "" || ev.Kind != adapter.SessionStart {
		t.Fatalf("%+v %v", ev, err)
	}
	ev, err = testSpec.Normalize("End", []byte(`{"session":"s2","cwd":"/w","reason":"exit","source":"x","model":"`+strings.Repeat("m", 300)+`"}`))
	if err != nil || ev.SessionID != "s2" || ev.EndReason != "exit" || ev.Source != "" || ev.Model != "" {
		t.Fatalf("%+v %v", ev, err)
	}
	refused := map[string]string{
		"unknown event":       `{"sid":"s","cwd":"/w"}|Nope`,
		"other event's name":  `{"event":"End","sid":"s","cwd":"/w"}|Start`,
		"event name a number": `{"event":1,"sid":"s","cwd":"/w"}|Start`,
		"session id too long": `{"sid":"` + strings.Repeat("s", 513) + `","cwd":"/w"}|Start`,
		"session id control":  `{"sid":"s\u0007","cwd":"/w"}|Start`,
		"cwd with NUL":        `{"sid":"s","cwd":"/w\u0000x"}|Start`,
		"cwd relative":        `{"sid":"s","cwd":"w"}|Start`,
		"array":               `[{"sid":"s","cwd":"/w"}]|Start`,
	}
	for name, c := range refused {
		payload, event, _ := strings.Cut(c, "|")
		if ev, err := testSpec.Normalize(event, []byte(payload)); err == nil {
			t.Errorf("%s: accepted %+v", name, ev)
		}
	}
}

func TestNormalizeTools(t *testing.T) {
	cases := []struct {
		tool, input string
		write       bool
		targets     []string
		shell       string
		unreadable  bool
	}{
		{"write", `{"path":"a"}`, true, []string{"a"}, "", false},
		{"write", `{"file":"b"}`, true, []string{"b"}, "", false},
		{"write", `{"path":7}`, true, nil, "", false},
		{"write", `"not an object"`, true, nil, "", false},
		{"patch", `{"body":"*** Begin Patch\n*** Delete File: d\n*** End Patch"}`, true, []string{"d"}, "", false},
		{"sh", `{"cmd":"rm x"}`, false, nil, "rm x", false},
		{"sh", `{"cmd":["rm","x y"]}`, false, nil, `'rm' 'x y'`, false},
		{"sh", `{"cmd":["rm",1]}`, false, nil, "", true},
		{"sh", `{"cmd":42}`, false, nil, "", true},
		{"sh", `"{\"cmd\":\"rm x [truncated]"`, false, nil, "", true},
		{"sh", `{"cmd":""}`, false, nil, "", false},
		{"sh", `{}`, false, nil, "", false},
		{"sh", `{"cmd":"*** Begin Patch\n*** Add File: p\n+x\n*** End Patch"}`, true, []string{"p"}, "", false},
		{"other", `{"path":"a"}`, false, nil, "", false},
	}
	for _, c := range cases {
		ev, err := testSpec.Normalize("Tool", []byte(`{"sid":"s","cwd":"/w","tool":"`+c.tool+`","input":`+c.input+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Tool != c.tool || ev.Write != c.write || !slices.Equal(ev.Targets, c.targets) || ev.Shell != c.shell || ev.ShellUnreadable != c.unreadable {
			t.Errorf("%s %s: %+v shell=%q unreadable=%v", c.tool, c.input, ev, ev.Shell, ev.ShellUnreadable)
		}
	}
}

func TestReplies(t *testing.T) {
	if got := string(AdditionalContext("E", "<a> & \"b\"\n").Stdout); got != `{"hookSpecificOutput":{"hookEventName":"E","additionalContext":"<a> & \"b\"\n"}}`+"\n" {
		t.Errorf("context: %s", got)
	}
	var v map[string]any
	if err := json.Unmarshal(PermissionDeny("").Stdout, &v); err != nil || !strings.Contains(string(PermissionDeny("").Stdout), DefaultReason) {
		t.Errorf("blank reason: %s %v", PermissionDeny("").Stdout, err)
	}
	if got := string(DecisionDeny("r").Stdout); got != `{"decision":"deny","reason":"r"}`+"\n" {
		t.Errorf("decision: %s", got)
	}
	if o := ExitTwoDeny("a\r\nb\n\n"); o.ExitCode != 2 || string(o.Stderr) != "a \nb\n" || o.Stdout != nil {
		t.Errorf("exit two: %+v", o)
	}
	if o := Allow(); o.ExitCode != 0 || o.Stdout != nil || o.Stderr != nil {
		t.Errorf("allow: %+v", o)
	}
}

func TestParse(t *testing.T) {
	for _, bad := range []string{"", " ", "null", "[]", "1", `"s"`, "{", "{}x", "{} {}"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	obj, err := Parse([]byte(` {"n": 12345678901234567890, "o": {"k": "v"}} `))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := obj["n"].(json.Number); !ok {
		t.Error("numbers must stay json.Number")
	}
	if s, present, err := obj.Obj("o").Str("k"); s != "v" || !present || err != nil {
		t.Error("nested read")
	}
	if _, present, err := obj.Str("n"); !present || err == nil {
		t.Error("a number read as a string must be an error")
	}
}

// TestPrompt: a before-turn prompt is read as a string, or as an array of
// content parts whose text parts are joined (Kimi Code 2.1.0); anything
// else gives no prompt, and the payload is still accepted.
func TestPrompt(t *testing.T) {
	spec := &Spec{Adapter: "test", Events: []EventKind{{"Turn", adapter.BeforeTurn}},
		SessionKeys: []string{"sid"}, CwdKeys: []string{"cwd"}, PromptKeys: []string{"prompt"}}
	cases := map[string]string{
		`"plain words"`: "plain words",
		`[{"type":"text","text":"please create out.txt"}]`:                                         "please create out.txt",
		`[{"type":"text","text":"one"},{"type":"image","source":{}},{"type":"text","text":"two"}]`: "one\ntwo",
		`[]`:                              "",
		`[{"type":"text","text":7}]`:      "",
		`["bare string part"]`:            "",
		`{"type":"text","text":"object"}`: "",
		`42`:                              "",
		`null`:                            "",
	}
	for prompt, want := range cases {
		ev, err := spec.Normalize("Turn", []byte(`{"sid":"s","cwd":"/w","prompt":`+prompt+`}`))
		if err != nil {
			t.Fatalf("prompt %s: refused: %v", prompt, err)
		}
		if ev.Prompt != want {
			t.Errorf("prompt %s read as %q, want %q", prompt, ev.Prompt, want)
		}
	}
}
