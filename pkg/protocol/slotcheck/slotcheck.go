// Package slotcheck is a test helper for the packages that build refusals
// (pkg/core, pkg/workspace): it reads a package's own Go sources and
// reports any text that spells one surface's words — an `acc …` command
// line, an acc-mcp tool or variable, a command-line flag — where a
// protocol slot belongs (docs/cli.md#refusal-details). Only tests import
// it.
package slotcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

// refusalWords are the spellings no refusal may hold: an acc command line,
// an acc-mcp tool name, any command-line flag.
var refusalWords = regexp.MustCompile("`acc |\\bacc_[a-z]|(^|[^\\w-])--[a-z]")

// surfaceWords are the spellings no other text may hold either, outside the
// allowed functions: a command line of the acc command, an acc-mcp tool or
// variable, or the acc command's start-directory flags. A git flag
// (--name-only) is no surface's word and passes.
var surfaceWords = regexp.MustCompile("`acc |\\bacc_[a-z]|\\bACC_MCP_|\\bacc (attach|detach|finish|inbox|reply|ack|message|status|sync|claim|release|wait|doctor|config|install|top|certify|acp|hook|history)\\b|--cwd\\b|--workspace\\b")

// Check reads the non-test Go files in dir and reports, through t:
//   - a string literal in a protocol.Errorf call that spells a surface's
//     words (refusalWords);
//   - any other string literal that spells them (surfaceWords), unless it
//     lies in a function or top-level declaration named in allow, whose
//     value says why that text may name the acc command;
//   - a field slot naming an id that is not in protocol.FieldIDs, and a
//     step whose command is not a protocol.Step… constant;
//   - a name in allow that no declaration in dir has, so the list cannot
//     outlive the code.
//
// It returns the number of reports, for a test that shows it fails.
func Check(t testing.TB, dir string, allow map[string]string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	report := func(pos token.Pos, format string, args ...any) {
		t.Helper()
		n++
		t.Errorf("%s: "+format, append([]any{fset.Position(pos)}, args...)...)
	}
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			for _, declName := range declNames(d) {
				seen[declName] = true
			}
			allowed := slices.ContainsFunc(declNames(d), func(s string) bool { _, ok := allow[s]; return ok })
			checkDecl(d, allowed, report)
		}
	}
	for name := range allow {
		if !seen[name] {
			report(token.NoPos, "the allowance names %s, which %s does not declare", name, dir)
		}
	}
	return n
}

// declNames returns the names a top-level declaration declares: a
// function's (a method's as Type.Method) or a const/var/type group's.
func declNames(d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			t := d.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if id, ok := t.(*ast.Ident); ok {
				return []string{id.Name + "." + d.Name.Name}
			}
		}
		return []string{d.Name.Name}
	case *ast.GenDecl:
		var out []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.ValueSpec:
				for _, id := range s.Names {
					out = append(out, id.Name)
				}
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			}
		}
		return out
	}
	return nil
}

func checkDecl(d ast.Decl, allowed bool, report func(token.Pos, string, ...any)) {
	inRefusal := map[*ast.BasicLit]bool{}
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			switch {
			case isProtocol(n.Fun, "Errorf"):
				ast.Inspect(n, func(m ast.Node) bool {
					if lit, ok := m.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						inRefusal[lit] = true
						if s, _ := strconv.Unquote(lit.Value); refusalWords.MatchString(s) {
							report(lit.Pos(), "a refusal spells a surface's words: %s", lit.Value)
						}
					}
					return true
				})
			case isProtocol(n.Fun, "Field"):
				checkFieldIDs(report, n.Args...)
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING && !inRefusal[n] && !allowed {
				if s, _ := strconv.Unquote(n.Value); surfaceWords.MatchString(s) {
					report(n.Pos(), "text spells a surface's words outside the allowed functions: %s", n.Value)
				}
			}
		case *ast.CompositeLit:
			switch {
			case isProtocol(n.Type, "FieldValue"), isProtocol(n.Type, "FieldList"):
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && (isIdent(kv.Key, "Name") || isIdent(kv.Key, "Names")) {
						if cl, ok := kv.Value.(*ast.CompositeLit); ok {
							checkFieldIDs(report, cl.Elts...)
						} else {
							checkFieldIDs(report, kv.Value)
						}
					}
				}
			case isProtocol(n.Type, "Step"):
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Command") {
						if sel, ok := kv.Value.(*ast.SelectorExpr); !ok || !strings.HasPrefix(sel.Sel.Name, "Step") || !isIdent(sel.X, "protocol") {
							report(kv.Pos(), "a step's command is not a protocol.Step… constant")
						}
					}
				}
			}
		}
		return true
	})
}

// checkFieldIDs reports a string literal among args that is not one of
// protocol.FieldIDs.
func checkFieldIDs(report func(token.Pos, string, ...any), args ...ast.Expr) {
	for _, a := range args {
		lit, ok := a.(*ast.BasicLit)
		if !ok {
			continue
		}
		if s, _ := strconv.Unquote(lit.Value); !slices.Contains(protocol.FieldIDs, s) {
			report(lit.Pos(), "field %q is not in protocol.FieldIDs", s)
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
