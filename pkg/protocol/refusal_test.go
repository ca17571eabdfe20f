package protocol

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// upper is a test surface: fields in capitals, steps as "do <command>".
type upper struct{}

func (upper) Field(n string) string    { return "F:" + n }
func (upper) Value(n, v string) string { return "F:" + n + "=" + v }
func (upper) Step(s Step) string       { return "do " + s.Command + fmt.Sprint(s.Args) }

func TestErrorfWithSlotsIsNeutralUntilRendered(t *testing.T) {
	e := Errorf(ReasonSyncUsage, "only %s takes %s; see %s (%d)",
		FieldValue{"scope", "history"}, FieldList{"and", []string{"kind", "cursor"}}, Step{Command: StepInbox}, 7).With("x", 1)
	want := "only {field scope=history} takes {fields kind and cursor}; see {step inbox} (7)"
	if e.Message != want {
		t.Fatalf("neutral message = %q, want %q", e.Message, want)
	}
	if !Unrendered(e.Message) {
		t.Fatalf("Unrendered(%q) = false", e.Message)
	}
	if got := e.Details["fields"]; !reflect.DeepEqual(got, []string{"scope", "kind", "cursor"}) {
		t.Fatalf("details.fields = %#v", got)
	}
	if got := e.Details["nextSteps"]; !reflect.DeepEqual(got, []Step{{Command: StepInbox}}) {
		t.Fatalf("details.nextSteps = %#v", got)
	}
	r := AsError(Render(fmt.Errorf("wrapped: %w", e), upper{}))
	if want := "only F:scope=history takes F:kind and F:cursor; see do inboxmap[] (7)"; r.Message != want {
		t.Fatalf("rendered = %q, want %q", r.Message, want)
	}
	if Unrendered(r.Message) || r.Reason != ReasonSyncUsage || r.Details["x"] != 1 {
		t.Fatalf("rendered error lost its reason or details: %#v", r)
	}
	if !Unrendered(e.Message) {
		t.Fatal("Render changed the original error")
	}
}

func TestErrorfWithoutSlotsIsUntouched(t *testing.T) {
	e := Errorf(ReasonInvalidInput, "a %s of %d", "limit", 3)
	if e.Message != "a limit of 3" || e.Details != nil {
		t.Fatalf("plain error changed: %#v", e)
	}
	if Render(e, upper{}) != error(e) {
		t.Fatal("Render copied an error without slots")
	}
	plain := errors.New("x")
	if Render(plain, upper{}) != plain {
		t.Fatal("Render changed a non-protocol error")
	}
}

func TestFailureEnvelopeCarriesSlotData(t *testing.T) {
	e := Errorf(ReasonUnknownMessage, "see %s about %s", Step{Command: StepMessage, Args: map[string]string{"to": "bob"}}, Field("messageId"))
	b, err := MarshalCompact(Failure(Render(e, upper{})))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"envelope_version":1,"ok":false,"error":{"code":4,"message":"see do messagemap[to:bob] about F:messageId","details":{"fields":["messageId"],"nextSteps":[{"command":"message","args":{"to":"bob"}}],"reasonCode":"unknown_message"}}}`
	if string(b) != want {
		t.Fatalf("envelope = %s\nwant       %s", b, want)
	}
}

func TestQuotedRefusalIsRenderedToo(t *testing.T) {
	inner := Errorf(ReasonUnknownMessage, "see %s", Step{Command: StepInbox})
	outer := Errorf(ReasonInternal, "cannot finish: %v; and %s", inner, Field("kind"))
	got := AsError(Render(outer, upper{})).Message
	if want := "cannot finish: see do inboxmap[]; and F:kind"; got != want {
		t.Fatalf("rendered = %q, want %q", got, want)
	}
	if _, ok := outer.Details["nextSteps"]; ok {
		t.Fatal("the outer refusal took the inner one's steps as its own")
	}
}

func TestRenderKeepsTextAddedAroundTheMessage(t *testing.T) {
	e := Errorf(ReasonOutcomeUnknown, "lost %s", Field("cursor"))
	cp := *e
	cp.Message = "first: " + e.Message + "; then retry"
	if got := AsError(Render(&cp, upper{})).Message; got != "first: lost F:cursor; then retry" {
		t.Fatalf("rendered = %q", got)
	}
}

// TestStepCommandsListsEveryStep: every Step… constant declared here is in
// StepCommands, which the renderers' tests walk, so no step can be added
// without every surface wording it.
func TestStepCommandsListsEveryStep(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "refusal.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Step") || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		n++
		if v, _ := strconv.Unquote(lit.Value); !slices.Contains(StepCommands, v) {
			t.Errorf("%s = %s is not in StepCommands", vs.Names[0].Name, lit.Value)
		}
		return true
	})
	if n != len(StepCommands) {
		t.Errorf("%d Step constants, %d StepCommands", n, len(StepCommands))
	}
}
