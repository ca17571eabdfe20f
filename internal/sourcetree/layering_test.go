package sourcetree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ourPrefix begins the import path of every package of the repository's modules.
const ourPrefix = "github.com/acc-go/acc/"

// layerRule says which of our packages those matching Pattern may import
// directly, in their code and in their tests. Paths are relative to
// ourPrefix. A pattern ending in "/..." matches that directory and every
// package below it; a "*" segment matches any one segment. A package may
// always import the packages of its own match — for "pkg/adapters/*/..."
// that is the one client directory it is in, not the other clients.
type layerRule struct {
	Pattern string
	May     []string
}

// layerRules is the layering of docs/design.md#layers as one table, lowest
// layer first (the order docs/design.md's generated picture follows): the
// protocol imports nothing of ours; the store and workspace discovery only
// the protocol; core the three of them; the router core and the protocol
// (it reaches the store only through core); the adapters are an island that
// knows only the adapter contract; internal/ (the surfaces) and cmd/ (three-line
// mains) may use anything under pkg/. The first matching rule applies; a
// package that no rule matches fails the test, so a new package is placed
// on purpose.
var layerRules = []layerRule{
	{"pkg/protocol/...", nil},
	{"pkg/storage/...", []string{"pkg/protocol/..."}},
	{"pkg/workspace/...", []string{"pkg/protocol/..."}},
	{"pkg/core/...", []string{"pkg/protocol/...", "pkg/storage/...", "pkg/workspace/..."}},
	{"pkg/router/...", []string{"pkg/protocol/...", "pkg/core/..."}},
	{"pkg/adapters/adapter/...", nil},
	{"pkg/adapters/*/...", []string{"pkg/adapters/adapter/..."}},
	{"internal/...", []string{"pkg/..."}},
	{"cmd/*", []string{"internal/...", "pkg/..."}},
}

// forbiddenBelowPkg: no package under pkg/ may reach these, even through
// other packages (Go's internal/ rule does not stop it: pkg/core's import
// path lies under the root module's).
var forbiddenBelowPkg = []string{"internal/...", "cmd/..."}

// goPackage is what the checks need of one `go list -json` entry.
type goPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// match reports whether path (relative to ourPrefix) matches pattern, and
// the directory the match stands for: the pattern's fixed part with each "*"
// replaced by the segment it matched.
func match(pattern, path string) (instance string, ok bool) {
	pat := strings.Split(strings.TrimSuffix(pattern, "/..."), "/")
	subtree := strings.HasSuffix(pattern, "/...")
	seg := strings.Split(path, "/")
	if len(seg) < len(pat) || (!subtree && len(seg) != len(pat)) {
		return "", false
	}
	for i, p := range pat {
		if p != "*" && p != seg[i] {
			return "", false
		}
	}
	return strings.Join(seg[:len(pat)], "/"), true
}

// ruleFor returns the first rule matching path, and the directory it matched.
func ruleFor(rules []layerRule, path string) (layerRule, string, bool) {
	for _, r := range rules {
		if inst, ok := match(r.Pattern, path); ok {
			return r, inst, true
		}
	}
	return layerRule{}, "", false
}

// ours returns the paths (relative to ourPrefix) of our packages in imports, sorted and unique.
func ours(imports ...[]string) []string {
	var out []string
	for _, list := range imports {
		for _, imp := range list {
			if rel, ok := strings.CutPrefix(imp, ourPrefix); ok && !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkLayers returns one line per breach of rules among pkgs: a package no
// rule places, an import (by code or test) its rule does not allow, and a
// package under pkg/ that reaches internal/ or cmd/ through any chain of
// imports. Each line names the import chain.
func checkLayers(pkgs []goPackage, rules []layerRule) []string {
	var problems []string
	graph := map[string][]string{} // our package -> our packages its code imports
	for _, p := range pkgs {
		if rel, ok := strings.CutPrefix(p.ImportPath, ourPrefix); ok {
			graph[rel] = ours(p.Imports)
		}
	}
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, ourPrefix)
		if !ok {
			continue
		}
		rule, self, ok := ruleFor(rules, rel)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no rule of layerRules places this package; add one (docs/design.md#layers)", rel))
			continue
		}
		for _, imp := range ours(p.Imports, p.TestImports, p.XTestImports) {
			if _, inSelf := match(self+"/...", imp); inSelf {
				continue
			}
			allowed := false
			for _, may := range rule.May {
				if _, ok := match(may, imp); ok {
					allowed = true
				}
			}
			if !allowed {
				problems = append(problems, fmt.Sprintf("%s → %s: %s may import only %s of ours (docs/design.md#layers)",
					rel, imp, rule.Pattern, mayList(rule.May)))
			}
		}
		if _, underPkg := match("pkg/...", rel); underPkg {
			if chain := reach(graph, rel, ours(p.TestImports, p.XTestImports), forbiddenBelowPkg); chain != nil {
				problems = append(problems, fmt.Sprintf("%s: reaches %s, but nothing under pkg/ may depend on internal/ or cmd/ (docs/design.md#layers)",
					strings.Join(chain, " → "), chain[len(chain)-1]))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

func mayList(may []string) string {
	if len(may) == 0 {
		return "nothing"
	}
	return strings.Join(may, ", ")
}

// reach searches breadth-first from start (whose tests also import
// testImports) for a package matching one of targets, and returns the
// shortest chain of imports to it, or nil.
func reach(graph map[string][]string, start string, testImports []string, targets []string) []string {
	prev := map[string]string{start: ""}
	queue := []string{start}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		next := graph[cur]
		if cur == start {
			next = append(slices.Clone(next), testImports...)
		}
		for _, n := range next {
			if _, seen := prev[n]; seen {
				continue
			}
			prev[n] = cur
			for _, t := range targets {
				if _, ok := match(t, n); ok {
					var chain []string
					for at := n; at != ""; at = prev[at] {
						chain = append([]string{at}, chain...)
					}
					return chain
				}
			}
			queue = append(queue, n)
		}
	}
	return nil
}

// listWorkspace runs `go list -json` over every package of go.work's modules.
func listWorkspace(t *testing.T) []goPackage {
	t.Helper()
	root := workspaceRoot(t)
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "work")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list: %s: %s (its imports may be missing from the checks)", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// TestLayering: every package of the workspace imports only what
// layerRules (docs/design.md#layers) allows it, and nothing under pkg/
// depends on internal/ or cmd/.
func TestLayering(t *testing.T) {
	t.Parallel()
	for _, p := range checkLayers(listWorkspace(t), layerRules) {
		t.Error(p)
	}
}

// TestLayeringReportsForbiddenImports feeds checkLayers a made-up workspace
// and checks that each kind of breach is reported with its import chain,
// and a sound workspace gives nothing.
func TestLayeringReportsForbiddenImports(t *testing.T) {
	t.Parallel()
	p := func(path string, imports ...string) goPackage {
		g := goPackage{ImportPath: ourPrefix + path}
		for _, i := range imports {
			if first, _, _ := strings.Cut(i, "/"); first == "pkg" || first == "internal" || first == "cmd" {
				i = ourPrefix + i
			}
			g.Imports = append(g.Imports, i)
		}
		return g
	}
	sound := []goPackage{
		p("pkg/protocol", "strings"),
		p("pkg/storage", "pkg/protocol", "modernc.org/sqlite"),
		p("pkg/core", "pkg/storage", "pkg/protocol"),
		p("pkg/router", "pkg/core"),
		p("pkg/adapters/adapter/hookio", "pkg/adapters/adapter"),
		p("pkg/adapters/claude", "pkg/adapters/adapter/hookio", "pkg/adapters/claude/internal/x"),
		p("internal/cli", "pkg/router", "internal/hook"),
		p("cmd/acc", "internal/cli"),
	}
	if got := checkLayers(sound, layerRules); len(got) != 0 {
		t.Fatalf("a sound workspace was reported:\n%s", strings.Join(got, "\n"))
	}

	bad := []goPackage{
		p("pkg/protocol", "pkg/storage"),
		p("pkg/storage"),
		p("pkg/core", "pkg/router"),
		p("pkg/router", "pkg/core"),
		p("pkg/adapters/claude", "pkg/adapters/codex"),
		p("pkg/adapters/codex"),
		p("pkg/storage/sqlite", "internal/hook"),
		p("internal/hook", "pkg/protocol"),
		p("pkg/newthing"),
		p("cmd/acc", "cmd/acc-hook"),
	}
	withTest := p("pkg/adapters/kimi")
	withTest.XTestImports = []string{ourPrefix + "internal/cli"}
	bad = append(bad, withTest, p("internal/cli"))
	got := strings.Join(checkLayers(bad, layerRules), "\n")
	for _, want := range []string{
		"pkg/protocol → pkg/storage: pkg/protocol/... may import only nothing of ours",
		"pkg/core → pkg/router: pkg/core/... may import only pkg/protocol/..., pkg/storage/..., pkg/workspace/... of ours",
		"pkg/adapters/claude → pkg/adapters/codex: pkg/adapters/*/... may import only pkg/adapters/adapter/... of ours",
		"pkg/storage/sqlite → internal/hook: pkg/storage/... may import only pkg/protocol/... of ours",
		"pkg/newthing: no rule of layerRules places this package",
		"cmd/acc → cmd/acc-hook: cmd/* may import only internal/..., pkg/... of ours",
		"pkg/adapters/kimi → internal/cli: pkg/adapters/*/...",
		// the chains: directly, and through other packages
		"pkg/storage/sqlite → internal/hook: reaches internal/hook, but nothing under pkg/ may depend on internal/ or cmd/",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
	// A chain through several packages, each import of which its rule
	// allows but the last: the report names the whole way from the router.
	chained := []goPackage{
		p("pkg/router", "pkg/core"),
		p("pkg/core", "pkg/storage/sqlite"),
		p("pkg/storage/sqlite", "internal/hook"),
		p("internal/hook"),
	}
	got = strings.Join(checkLayers(chained, layerRules), "\n")
	if want := "pkg/router → pkg/core → pkg/storage/sqlite → internal/hook: reaches internal/hook"; !strings.Contains(got, want) {
		t.Errorf("report lacks %q; got:\n%s", want, got)
	}
}

// The generated picture sits in docs/design.md between these two lines.
const (
	pictureBegin = "<!-- layers:begin; generated by `ACC_UPDATE=1 go test ./internal/sourcetree/ -run TestLayersPicture`, do not edit by hand -->"
	pictureEnd   = "<!-- layers:end -->"
)

// renderPicture draws, for each of our packages, the packages of ours its
// code (not its tests) imports directly: a Markdown table ordered as
// layerRules is (lowest layer first), then by path.
func renderPicture(pkgs []goPackage, rules []layerRule) string {
	type row struct {
		rank    int
		path    string
		imports []string
	}
	var rows []row
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, ourPrefix)
		if !ok {
			continue
		}
		rank := len(rules)
		for i, r := range rules {
			if _, ok := match(r.Pattern, rel); ok {
				rank = i
				break
			}
		}
		rows = append(rows, row{rank, rel, ours(p.Imports)})
	}
	slices.SortFunc(rows, func(a, b row) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return strings.Compare(a.path, b.path)
	})
	var b strings.Builder
	b.WriteString("| package | imports of ours (code, not tests) |\n|---|---|\n")
	for _, r := range rows {
		imports := "—"
		if len(r.imports) > 0 {
			imports = "`" + strings.Join(r.imports, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", r.path, imports)
	}
	return b.String()
}

// TestLayersPicture: the picture of the house in docs/design.md#layers is
// what `go list` shows today. ACC_UPDATE=1 rewrites it.
func TestLayersPicture(t *testing.T) {
	t.Parallel()
	path := filepath.Join(workspaceRoot(t), "docs", "design.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), pictureBegin+"\n")
	_, after, ok2 := strings.Cut(rest, pictureEnd)
	if !ok1 || !ok2 {
		t.Fatalf("docs/design.md lacks the lines\n%s\n%s\nunder ## Layers", pictureBegin, pictureEnd)
	}
	want := before + pictureBegin + "\n" + renderPicture(listWorkspace(t), layerRules) + pictureEnd + after
	if want == string(doc) {
		return
	}
	if os.Getenv("ACC_UPDATE") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("the picture of the layers in docs/design.md is out of date; run `ACC_UPDATE=1 go test ./internal/sourcetree/ -run TestLayersPicture`")
}
