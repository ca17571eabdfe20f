package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestExitCodesTable(t *testing.T) {
	// The stable codes of docs/decisions.md#3-exit-codes, retyped.
	want := map[ExitCode]string{0: "ok", 1: "internal", 2: "usage", 3: "timeout", 4: "data", 5: "conflict", 6: "reserved"}
	if len(ExitCodes) != len(want) {
		t.Fatalf("ExitCodes has %d rows, want %d", len(ExitCodes), len(want))
	}
	for i, e := range ExitCodes {
		if int(e.Code) != i {
			t.Errorf("row %d holds code %d; the table must list 0..6 in order", i, e.Code)
		}
		if want[e.Code] != e.Name {
			t.Errorf("code %d is named %q, want %q", e.Code, e.Name, want[e.Code])
		}
		if strings.TrimSpace(e.Meaning) == "" {
			t.Errorf("code %d has no meaning", e.Code)
		}
		if e.Code.Name() != e.Name {
			t.Errorf("ExitCode(%d).Name() = %q", e.Code, e.Code.Name())
		}
	}
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

func TestReasonsTable(t *testing.T) {
	codes := map[ExitCode]bool{}
	for _, e := range ExitCodes {
		codes[e.Code] = true
	}
	seen := map[string]bool{}
	perCode := map[ExitCode]int{}
	for _, r := range Reasons {
		if seen[r.Reason] {
			t.Errorf("reason %q is listed twice", r.Reason)
		}
		seen[r.Reason] = true
		if !snakeCase.MatchString(r.Reason) {
			t.Errorf("reason %q is not snake_case", r.Reason)
		}
		if !codes[r.Code] {
			t.Errorf("reason %q has exit code %d, which ExitCodes does not list", r.Reason, r.Code)
		}
		if r.Code == ExitOK {
			t.Errorf("reason %q is a refusal with exit code 0", r.Reason)
		}
		if strings.TrimSpace(r.Meaning) == "" || strings.Contains(r.Meaning, "|") || strings.Contains(r.Meaning, "\n") {
			t.Errorf("reason %q: meaning %q must be one non-empty line without '|'", r.Reason, r.Meaning)
		}
		got, ok := LookupReason(r.Reason)
		if !ok || got != r {
			t.Errorf("LookupReason(%q) = %v, %v", r.Reason, got, ok)
		}
		if e := Errorf(r.Reason, "x"); e.Code() != r.Code {
			t.Errorf("Errorf(%q).Code() = %d, want %d", r.Reason, e.Code(), r.Code)
		}
		perCode[r.Code]++
	}
	for c := ExitInternal; c <= ExitConflict; c++ {
		if perCode[c] == 0 {
			t.Errorf("exit code %d has no reason", c)
		}
		list := ReasonsByCode(c)
		if len(list) != perCode[c] || !sort.StringsAreSorted(list) {
			t.Errorf("ReasonsByCode(%d) = %v", c, list)
		}
	}
	if _, ok := LookupReason("no_such_reason"); ok {
		t.Error("LookupReason found an unlisted reason")
	}
	if got := Errorf("no_such_reason", "x").Code(); got != ExitInternal {
		t.Errorf("an unlisted reason reports exit %d, want %d", got, ExitInternal)
	}
}

// TestSpecReasonCodes checks the reason codes docs/decisions.md#16-store-busy
// and docs/decisions.md#17-reason-codes name, retyped here with the exit
// codes those decisions give them.
func TestSpecReasonCodes(t *testing.T) {
	want := map[string]ExitCode{
		"caller_identity_unresolved": ExitUsage,
		"caller_identity_ambiguous":  ExitUsage,
		"stale_generation":           ExitConflict,
		"unknown_recipient":          ExitData,
		"claim_conflict":             ExitConflict,
		"client_message_id_conflict": ExitConflict,
		"reply_required":             ExitConflict,
		"store_busy":                 ExitTimeout,
		"store_foreign_workspace":    ExitData,
		"store_version_unknown":      ExitData,
		"config_unknown_key":         ExitData,
		"illegal_receipt_transition": ExitConflict,
		"internal_error":             ExitInternal,
	}
	for reason, code := range want {
		r, ok := LookupReason(reason)
		if !ok {
			t.Errorf("reason %q is missing from Reasons", reason)
			continue
		}
		if r.Code != code {
			t.Errorf("reason %q has exit %d, want %d", reason, r.Code, code)
		}
	}
}

// TestEveryReasonConstantIsListed parses the package source and checks that
// every exported Reason… constant has a row in Reasons and every row has a
// constant, so a new constant without a row fails here.
func TestEveryReasonConstantIsListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	consts := map[string]string{} // value → constant name
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Reason") || !id.IsExported() {
						continue
					}
					if i >= len(vs.Values) {
						t.Errorf("%s: constant %s has no explicit value", fset.Position(id.Pos()), id.Name)
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: constant %s is not a string literal", fset.Position(id.Pos()), id.Name)
						continue
					}
					value, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					if other, dup := consts[value]; dup {
						t.Errorf("constants %s and %s share the value %q", other, id.Name, value)
					}
					consts[value] = id.Name
				}
			}
		}
	}
	if len(consts) == 0 {
		t.Fatal("found no Reason constants; the parser walk is broken")
	}
	listed := map[string]bool{}
	for _, r := range Reasons {
		listed[r.Reason] = true
		if _, ok := consts[r.Reason]; !ok {
			t.Errorf("Reasons lists %q, but no Reason… constant has that value", r.Reason)
		}
	}
	var missing []string
	for value, name := range consts {
		if !listed[value] {
			missing = append(missing, name+" ("+value+")")
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("constant %s has no row in Reasons", m)
	}
}
