package sourcetree

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The rule these tests keep: the code and the docs cite only documents of
// the repository. A comment that cites docs/<file>.md#<anchor> names a file of
// docs/ and a heading of it, by GitHub's anchor rules, never a heading by
// its quoted title or a rule by its number, which no check can follow; a
// comment or a doc never points at material outside the repository (the
// contract the project started from, its reference notes and captures, the
// numbers of its tracker's issues), since a reader of the repository
// cannot open it. The words the code relies on are in
// docs/protocol.md and docs/decisions.md.

// pattern is a spelling of a citation the checks refuse, with what they
// say about it.
type pattern struct {
	re   *regexp.Regexp
	what string
}

// forbidden are the spellings of citations that point outside the
// repository, each with what to write instead.
var forbidden = []pattern{
	{regexp.MustCompile(`reference/`), "cites reference/…, outside the repository"},
	{regexp.MustCompile(`\bSPEC\b`), "cites SPEC, outside the repository"},
	{regexp.MustCompile(`§`), "cites a section with §, outside the repository"},
	{regexp.MustCompile(`seeds/`), "cites seeds/…, outside the repository"},
	{regexp.MustCompile(`fixtures/captured`), "cites fixtures/captured, outside the repository"},
	{regexp.MustCompile(`/shared/`), "cites /shared/, outside the repository"},
	{regexp.MustCompile(`\bSTYLE\b`), "cites STYLE, outside the repository"},
}

// issueNumber matches a reference to an issue of a tracker by its
// number, in either case, with or without '#', not a word that merely
// ends in "issue" ("tissue").
var issueNumber = regexp.MustCompile(`(?i)\bissues?\s+#?\d+\b`)

// headingByName matches a docs citation followed by a heading's title in
// quotes, or a file (with no anchor) followed by the number of a rule in
// it: a reference no checker can follow, where docs/<file>.md#<anchor>
// can be checked.
var headingByName = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_.-]+\.md(?:(?:#[A-Za-z0-9_-]+)?,?\s+"|,?\s+rule\s+\d)`)

// mdHeadingByName is headingByName in Markdown: a link to a file
// followed by a heading's title in quotes or a rule's number.
var mdHeadingByName = pattern{
	regexp.MustCompile(`\]\([^)\s]*\.md\),?\s+(?:"|rule\s+\d)`),
	"cites a heading by its title or number; link to <file>.md#<anchor>",
}

// acrossLines are the patterns a comment or a paragraph may break over
// two lines; each is looked for in a line joined to the next, and
// reported on the line where it starts.
var acrossLines = []pattern{
	{issueNumber, "cites an issue number, outside the repository; say what the rule is or cite docs/<file>.md#<anchor>"},
	{headingByName, "cites a heading by its title or number; cite docs/<file>.md#<anchor>"},
}

// acrossLineProblems returns what acrossLines finds starting in line,
// with next (the following line of the same comment or paragraph, "" when
// there is none) joined to it by a space.
func acrossLineProblems(line, next string, extra ...pattern) []string {
	joined := line + " " + strings.TrimSpace(next)
	var out []string
	for _, f := range append(slices.Clone(acrossLines), extra...) {
		for _, loc := range f.re.FindAllStringIndex(joined, -1) {
			if loc[0] < len(line) {
				out = append(out, f.what)
				break
			}
		}
	}
	return out
}

// docCitation matches docs/<file>.md with an optional #anchor, not as the
// tail of a longer path.
var docCitation = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])docs/([A-Za-z0-9_.-]+?\.md)(#[A-Za-z0-9_-]+)?`)

// mdLink matches the target of a Markdown link, "](target)".
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug turns a heading into its GitHub anchor: lower case; letters,
// digits, '-' and '_' kept; spaces turned into '-'; everything else
// (punctuation, backticks, dots) dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown document's headings: ATX
// headings ("#" to "######" then a space) outside fenced code blocks; a
// heading whose slug was already taken gets "-1", "-2", … as GitHub does.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
		if level < 1 || level > 6 || len(trimmed) == level || trimmed[level] != ' ' {
			continue
		}
		text := strings.TrimRight(strings.TrimSpace(trimmed[level:]), "#")
		s := slug(text)
		if n := count[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	return out
}

// docSet is what the checks know of the repository's Markdown files:
// a slash path relative to the repository root ("docs/protocol.md") to
// the anchors of its headings. A file that is absent has no entry.
type docSet map[string]map[string]bool

// checkLine returns what is wrong with one line of text that cites docs
// as a comment does (docs/<file>.md relative to the repository root): a
// forbidden citation, one that names a heading other than by its anchor,
// a docs file that does not exist, an anchor that is not a heading of it.
// next is the comment's following line ("" at its end), for the citations
// a line break may split.
func checkLine(line, next string, docs docSet) []string {
	var out []string
	for _, f := range forbidden {
		if f.re.MatchString(line) {
			out = append(out, f.what)
		}
	}
	out = append(out, acrossLineProblems(line, next)...)
	return append(out, docProblems(line, docs)...)
}

// docProblems returns, for each docs/<file>.md citation in line (relative
// to the repository root), that the file does not exist or that its anchor
// is no heading of it.
func docProblems(line string, docs docSet) []string {
	var out []string
	for _, m := range docCitation.FindAllStringSubmatch(line, -1) {
		file := "docs/" + m[1]
		heads, ok := docs[file]
		if !ok {
			out = append(out, fmt.Sprintf("cites %s, which does not exist", file))
			continue
		}
		if a := strings.TrimPrefix(m[2], "#"); a != "" && !heads[a] {
			out = append(out, fmt.Sprintf("cites %s#%s, which is no heading of %s", file, a, file))
		}
	}
	return out
}

// checkMarkdown returns what is wrong in a Markdown file at slash path
// name (relative to the repository root): forbidden citations, and
// relative links to .md files (or to "#anchor" in the same file) that do
// not resolve. Each problem is "name:line: what".
func checkMarkdown(name, text string, docs docSet) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		at := fmt.Sprintf("%s:%d: ", name, i+1)
		for _, f := range forbidden {
			if f.re.MatchString(line) {
				out = append(out, at+f.what)
			}
		}
		next := ""
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		for _, what := range acrossLineProblems(line, next, mdHeadingByName) {
			out = append(out, at+what)
		}
		for _, what := range docProblems(line, docs) {
			out = append(out, at+what)
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			if file != "" && !strings.HasSuffix(file, ".md") {
				continue
			}
			resolved := name
			if file != "" {
				resolved = path.Clean(path.Join(path.Dir(name), file))
			}
			heads, ok := docs[resolved]
			if !ok {
				out = append(out, fmt.Sprintf("%slinks to %s, which does not exist", at, target))
				continue
			}
			if anchor != "" && !heads[anchor] {
				out = append(out, fmt.Sprintf("%slinks to %s, but %s has no heading #%s", at, target, resolved, anchor))
			}
		}
	}
	return out
}

// checkGoSource returns what is wrong in the comments of one Go file at
// slash path name; src is its text. A file that does not parse is
// reported, not skipped.
func checkGoSource(name string, src []byte, docs docSet) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return []string{fmt.Sprintf("%s: does not parse: %v", name, err)}
	}
	var out []string
	for _, group := range f.Comments {
		type numbered struct {
			n    int
			text string
		}
		var lines []numbered
		for _, c := range group.List {
			first := fset.Position(c.Pos()).Line
			text := strings.TrimPrefix(c.Text, "//")
			for i, line := range strings.Split(text, "\n") {
				lines = append(lines, numbered{first + i, line})
			}
		}
		for i, l := range lines {
			next := ""
			if i+1 < len(lines) {
				next = lines[i+1].text
			}
			for _, what := range checkLine(l.text, next, docs) {
				out = append(out, fmt.Sprintf("%s:%d: %s", name, l.n, what))
			}
		}
	}
	return out
}

// repoRoot is the directory holding go.work, found walking up from the
// test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the test's directory")
		}
		dir = parent
	}
}

// skipDir reports whether the walk leaves a directory out: built binaries,
// Git's and other hidden directories but CI's (.ci, .github), and test
// data (copies of foreign material that acc's tests read, not acc's own
// words), whose testscripts are read apart (hashScript).
func skipDir(name string) bool {
	if name == ".ci" || name == ".github" {
		return false
	}
	return name == "bin" || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")
}

// hashScript reports whether a file at slash path rel is acc's own words
// commented with '#': a testscript (testdata/script/*.txtar, acc's tests,
// not foreign data), a shell script, the Makefile, CI's entry point or a
// YAML file of the build.
func hashScript(rel string) bool {
	base := path.Base(rel)
	switch {
	case strings.HasSuffix(rel, ".txtar"):
		return path.Base(path.Dir(rel)) == "script" && path.Base(path.Dir(path.Dir(rel))) == "testdata"
	case strings.Contains("/"+rel, "/testdata/"):
		return false
	}
	return strings.HasSuffix(base, ".sh") || base == "Makefile" || rel == ".ci/run" ||
		strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")
}

// checkHashComments returns what is wrong in the '#' comment lines of a
// script at slash path name (hashScript), as checkLine judges a Go
// comment's: consecutive comment lines are one comment, so a citation may
// break over two of them. In a testscript only the script is read, not
// the files it carries. Each problem is "name:line: what".
func checkHashComments(name, text string) func(docs docSet) []string {
	return func(docs docSet) []string {
		lines := strings.Split(text, "\n")
		if strings.HasSuffix(name, ".txtar") {
			for i, l := range lines {
				if strings.HasPrefix(l, "-- ") && strings.HasSuffix(strings.TrimSpace(l), " --") {
					lines = lines[:i]
					break
				}
			}
		}
		comment := func(i int) (string, bool) {
			if i >= len(lines) {
				return "", false
			}
			t := strings.TrimSpace(lines[i])
			if !strings.HasPrefix(t, "#") || strings.HasPrefix(t, "#!") {
				return "", false
			}
			return strings.TrimPrefix(t, "#"), true
		}
		var out []string
		for i := range lines {
			c, ok := comment(i)
			if !ok {
				continue
			}
			next, _ := comment(i + 1)
			for _, what := range checkLine(c, next, docs) {
				out = append(out, fmt.Sprintf("%s:%d: %s", name, i+1, what))
			}
		}
		return out
	}
}

// TestCitationsResolve walks every Go file of every module and every
// Markdown file outside test data, and reports, all at once, each
// citation that points outside the repository and each docs file or
// anchor cited that does not exist.
func TestCitationsResolve(t *testing.T) {
	root := repoRoot(t)
	docs := docSet{}
	var goFiles, mdFiles []string
	var scripts []func(docSet) []string
	// walkScripts reads the testscripts of a testdata directory, which
	// the walk then skips.
	walkScripts := func(dir string) error {
		names, err := filepath.Glob(filepath.Join(dir, "script", "*.txtar"))
		if err != nil {
			return err
		}
		for _, p := range names {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			text, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			scripts = append(scripts, checkHashComments(filepath.ToSlash(rel), string(text)))
		}
		return filepath.SkipDir
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				if d.Name() == "testdata" {
					return walkScripts(p)
				}
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if hashScript(rel) {
			text, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			scripts = append(scripts, checkHashComments(rel, string(text)))
			return nil
		}
		switch {
		case strings.HasSuffix(rel, ".go"):
			goFiles = append(goFiles, rel)
		case strings.HasSuffix(rel, ".md"):
			text, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			docs[rel] = anchors(string(text))
			mdFiles = append(mdFiles, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(goFiles) == 0 || docs["docs/protocol.md"] == nil {
		t.Fatalf("the walk from %s found %d Go files and no docs/protocol.md: not the repository", root, len(goFiles))
	}
	var problems []string
	for _, rel := range goFiles {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, checkGoSource(rel, src, docs)...)
	}
	for _, rel := range mdFiles {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, checkMarkdown(rel, string(text), docs)...)
	}
	if len(scripts) == 0 {
		t.Fatal("the walk found no scripts or testscripts: their comments went unchecked")
	}
	for _, check := range scripts {
		problems = append(problems, check(docs)...)
	}
	slices.Sort(problems)
	if len(problems) > 0 {
		t.Errorf("%d citation problem(s); cite docs/<file>.md or docs/<file>.md#<heading-anchor> of this repository:\n%s",
			len(problems), strings.Join(problems, "\n"))
	}
}

// testDocs is a small docs/ for the checker's own tests.
var testDocs = docSet{
	"docs/protocol.md":  anchors("# Protocol\n\n## Identifiers and text fields\n\n### Receipt states\n"),
	"docs/decisions.md": anchors("# Decisions\n\n## 14. Client ids\n"),
	"README.md":         anchors("# acc\n\n## Install\n"),
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"14. Client ids":                    "14-client-ids",
		"Receipt states":                    "receipt-states",
		"`acc.workspace.json`":              "accworkspacejson",
		"`acc doctor`":                      "acc-doctor",
		"Live push: waking an idle session": "live-push-waking-an-idle-session",
		"0. Wire acc into your clients":     "0-wire-acc-into-your-clients",
		"snake_case and kebab-case":         "snake_case-and-kebab-case",
		"Überblick":                         "überblick",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnchors(t *testing.T) {
	md := "# Title\n\n## Usage\n\n```sh\n# not a heading\n```\n\n## Usage\n\n### Usage\n\n#NoSpace\n\n~~~\n## fenced\n~~~\n## Closing ##\n"
	got := anchors(md)
	for _, want := range []string{"title", "usage", "usage-1", "usage-2", "closing"} {
		if !got[want] {
			t.Errorf("anchors lack %q; have %v", want, got)
		}
	}
	for _, not := range []string{"not-a-heading", "nospace", "fenced", "closing-"} {
		if got[not] {
			t.Errorf("anchors hold %q, which is no heading; have %v", not, got)
		}
	}
}

func TestCheckGoSource(t *testing.T) {
	cases := []struct {
		name, comment string
		want          []string // substrings of the problems, in order; none = clean
	}{
		{"good file", "// Rules: docs/protocol.md.", nil},
		{"good anchor", "// Limits (docs/protocol.md#identifiers-and-text-fields).", nil},
		{"good decision", "// Client ids (docs/decisions.md#14-client-ids); states docs/protocol.md#receipt-states", nil},
		{"longer path is no citation", "// see pkg/adapters/claude/docs/x.md", nil},
		{"missing file", "// see docs/nowhere.md#x", []string{"x.go:3: cites docs/nowhere.md, which does not exist"}},
		{"missing anchor", "// see docs/protocol.md#no-such-heading", []string{"x.go:3: cites docs/protocol.md#no-such-heading, which is no heading of docs/protocol.md"}},
		{"reference", "// Limits (reference/core.md §1.1).", []string{"x.go:3: cites reference/", "x.go:3: cites a section with §"}},
		{"spec decision", "// Exit codes (SPEC decision 3).", []string{"x.go:3: cites SPEC"}},
		{"bare section", "// the inbox rule, §9.2", []string{"x.go:3: cites a section with §"}},
		{"seeds", "// from seeds/000_x.txt", []string{"x.go:3: cites seeds/"}},
		{"captures", "// fixtures/captured/kimi-2.1.0", []string{"x.go:3: cites fixtures/captured"}},
		{"shared", "// /work/shared/notes", []string{"x.go:3: cites /shared/"}},
		{"style guide", "// a contract (STYLE.md item 9)", []string{"x.go:3: cites STYLE"}},
		{"style as a word", "// the display style of a line", nil},
		{"quoted heading", `// (docs/protocol.md, "Receipt states")`, []string{"x.go:3: cites a heading by its title or number; cite docs/<file>.md#<anchor>"}},
		{"quoted heading without comma", `// (docs/protocol.md "Receipt states")`, []string{"x.go:3: cites a heading by its title"}},
		{"second quoted heading after an anchor", `// (docs/protocol.md#receipt-states, "Identifiers and text fields")`, []string{"x.go:3: cites a heading by its title"}},
		{"rule number", "// (docs/protocol.md, rule 3)", []string{"x.go:3: cites a heading by its title or number"}},
		{"rule number under an anchor", "// (docs/protocol.md#identifiers-and-text-fields, rule 3)", nil},
		{"quotes elsewhere", `// docs/protocol.md#receipt-states says "queued" first`, nil},
		{"issue", "// found in the review of issue 16", []string{"x.go:3: cites an issue number, outside the repository"}},
		{"issue with hash", "// Issue #17 lists them", []string{"x.go:3: cites an issue number"}},
		{"issues", "// see issues 9 and 10", []string{"x.go:3: cites an issue number"}},
		{"word ending in issue", "// tissue 4 and reissue 5 are words", nil},
		{"issue without number", "// an issue the guard has", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "package x\n\n" + c.comment + "\nvar V = 1\n"
			got := checkGoSource("x.go", []byte(src), testDocs)
			if len(got) != len(c.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestCheckGoSourceLines(t *testing.T) {
	src := "package x\n\n/*\nfine\nsee SPEC decision 3\n*/\nvar V = 1 // and docs/gone.md\n\nvar s = \"SPEC in a string is no comment\"\n"
	got := checkGoSource("x.go", []byte(src), testDocs)
	want := []string{"x.go:5: cites SPEC, outside the repository", "x.go:7: cites docs/gone.md, which does not exist"}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	split := "package x\n\n// Held (docs/protocol.md,\n// \"Receipt states\"); found in issue\n// 16.\nvar V = 1\n\n// One line (docs/protocol.md,\nvar W = 1 // \"Receipt states\") is no comment group\n"
	got = checkGoSource("x.go", []byte(split), testDocs)
	want = []string{"x.go:3: cites a heading by its title or number; cite docs/<file>.md#<anchor>", "x.go:4: cites an issue number, outside the repository; say what the rule is or cite docs/<file>.md#<anchor>"}
	if !slices.Equal(got, want) {
		t.Errorf("a citation split over two comment lines: problems %q, want %q", got, want)
	}
	if bad := checkGoSource("y.go", []byte("package"), testDocs); len(bad) != 1 || !strings.Contains(bad[0], "does not parse") {
		t.Errorf("an unparsable file gives %q, want one 'does not parse'", bad)
	}
}

func TestCheckMarkdown(t *testing.T) {
	md := strings.Join([]string{
		"# Guide",
		"See [ids](protocol.md#identifiers-and-text-fields), [decisions](decisions.md) and [top](#guide).",
		"The [site](https://example.test/x.md#nowhere) and [a picture](x.png) are not checked.",
		"Broken: [gone](gone.md), [anchor](protocol.md#nope), [here](#nope), [up](../README.md#install).",
		"From the original's reference/core.md §8.2 and SPEC decision 5.",
		"As [protocol.md](protocol.md), \"Receipt states\" says, and issue",
		"#12; docs/protocol.md#nope.",
	}, "\n")
	got := checkMarkdown("docs/guide.md", md, docSet{
		"docs/guide.md":     anchors(md),
		"docs/protocol.md":  testDocs["docs/protocol.md"],
		"docs/decisions.md": testDocs["docs/decisions.md"],
		"README.md":         testDocs["README.md"],
	})
	want := []string{
		"docs/guide.md:4: links to gone.md, which does not exist",
		"docs/guide.md:4: links to protocol.md#nope, but docs/protocol.md has no heading #nope",
		"docs/guide.md:4: links to #nope, but docs/guide.md has no heading #nope",
		"docs/guide.md:5: cites reference/…, outside the repository",
		"docs/guide.md:5: cites SPEC, outside the repository",
		"docs/guide.md:5: cites a section with §, outside the repository",
		"docs/guide.md:6: cites an issue number, outside the repository; say what the rule is or cite docs/<file>.md#<anchor>",
		"docs/guide.md:6: cites a heading by its title or number; link to <file>.md#<anchor>",
		"docs/guide.md:7: cites docs/protocol.md#nope, which is no heading of docs/protocol.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRepoRootHoldsGoWork keeps repoRoot honest: the directory it finds
// holds go.work and this package.
func TestRepoRootHoldsGoWork(t *testing.T) {
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "sourcetree", "citations_test.go")); errors.Is(err, fs.ErrNotExist) {
		t.Errorf("repoRoot %s does not hold internal/sourcetree", root)
	}
}

// TestCheckHashComments: a testscript's and a shell script's '#' comments
// are held to the rules of a Go comment's (a citation broken over two
// comment lines too); commands, a shebang and the files a testscript
// carries are not read.
func TestCheckHashComments(t *testing.T) {
	script := strings.Join([]string{
		"# Text rules (SPEC decision 5) and docs/protocol.md#receipt-states.",
		"exec acc send 'SPEC in a command is no comment'",
		"  # held (docs/protocol.md,",
		"# \"Receipt states\")",
		"# docs/protocol.md#gone",
		"-- notes.md --",
		"# reference/core.md §9 in a carried file is data",
	}, "\n")
	got := checkHashComments("internal/cli/testdata/script/x.txtar", script)(testDocs)
	want := []string{
		"internal/cli/testdata/script/x.txtar:1: cites SPEC, outside the repository",
		"internal/cli/testdata/script/x.txtar:3: cites a heading by its title or number; cite docs/<file>.md#<anchor>",
		"internal/cli/testdata/script/x.txtar:5: cites docs/protocol.md#gone, which is no heading of docs/protocol.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("testscript problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sh := "#!/usr/bin/env bash\n# see docs/nowhere.md\necho '# SPEC'\n"
	if got := checkHashComments("scripts/x.sh", sh)(testDocs); !slices.Equal(got, []string{"scripts/x.sh:2: cites docs/nowhere.md, which does not exist"}) {
		t.Errorf("shell script problems %q", got)
	}
	for rel, want := range map[string]bool{
		"internal/cli/testdata/script/a.txtar": true, "scripts/check-modules.sh": true, "Makefile": true,
		".ci/run": true, ".goreleaser.yaml": true, "pkg/x/testdata/y.txtar": false, "pkg/x/testdata/run.sh": false, "docs/cli.md": false,
	} {
		if hashScript(rel) != want {
			t.Errorf("hashScript(%q) = %v, want %v", rel, !want, want)
		}
	}
}
