package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// discoveryFiles word their refusals per surface through Front until
// workspace discovery moves to its own package; the check below skips
// them (a file that is gone is simply not read).
var discoveryFiles = []string{"workspace.go", "runtime_env.go", "config_init.go", "paths.go", "containment.go"}

// surfaceWords are the spellings only a surface may choose: an acc command
// line, an acc-mcp tool name, a command-line flag.
var surfaceWords = regexp.MustCompile("`acc |\\bacc_[a-z]|(^|[^\\w-])--[a-z]")

// TestRefusalsCarryNoSurfaceWords: core's rules are the same on every
// surface, so no refusal core builds (a protocol.Errorf call, its format
// and arguments) spells a flag, a tool or a command; it names fields and
// next steps as slots each surface renders (docs/cli.md#refusal-details).
// Every field a slot names is one of protocol.FieldIDs, and every step's
// command a protocol.Step constant, so the renderers' test in
// internal/wording covers it.
func TestRefusalsCarryNoSurfaceWords(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || slices.Contains(discoveryFiles, name) {
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
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				switch {
				case isProtocol(n.Fun, "Errorf"):
					ast.Inspect(n, func(m ast.Node) bool {
						if lit, ok := m.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, _ := strconv.Unquote(lit.Value); surfaceWords.MatchString(s) {
								t.Errorf("%s: a refusal spells a surface's words: %s", fset.Position(lit.Pos()), lit.Value)
							}
						}
						return true
					})
				case isProtocol(n.Fun, "Field"):
					checkFieldIDs(t, fset, n.Args...)
				}
			case *ast.CompositeLit:
				switch {
				case isProtocol(n.Type, "FieldValue"), isProtocol(n.Type, "FieldList"):
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && (isIdent(kv.Key, "Name") || isIdent(kv.Key, "Names")) {
							if cl, ok := kv.Value.(*ast.CompositeLit); ok {
								checkFieldIDs(t, fset, cl.Elts...)
							} else {
								checkFieldIDs(t, fset, kv.Value)
							}
						}
					}
				case isProtocol(n.Type, "Step"):
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Command") {
							if sel, ok := kv.Value.(*ast.SelectorExpr); !ok || !strings.HasPrefix(sel.Sel.Name, "Step") || !isIdent(sel.X, "protocol") {
								t.Errorf("%s: a step's command is not a protocol.Step… constant", fset.Position(kv.Pos()))
							}
						}
					}
				}
			}
			return true
		})
	}
}

// checkFieldIDs reports a string literal among args that is not one of
// protocol.FieldIDs.
func checkFieldIDs(t *testing.T, fset *token.FileSet, args ...ast.Expr) {
	t.Helper()
	for _, a := range args {
		lit, ok := a.(*ast.BasicLit)
		if !ok {
			continue
		}
		if s, _ := strconv.Unquote(lit.Value); !slices.Contains(protocol.FieldIDs, s) {
			t.Errorf("%s: field %q is not in protocol.FieldIDs", fset.Position(lit.Pos()), s)
		}
	}
}

func isProtocol(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == name && isIdent(sel.X, "protocol")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
