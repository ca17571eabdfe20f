package cli

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// commandPaths lists every command of the tree as its words after "acc"
// (the root as none), with the command.
func commandPaths() (paths [][]string, cmds []*cli.Command) {
	a := &app{env: Env{Stdout: io.Discard, Stderr: io.Discard}}
	var walk func(prefix []string, c *cli.Command)
	walk = func(prefix []string, c *cli.Command) {
		paths = append(paths, prefix)
		cmds = append(cmds, c)
		for _, s := range c.Commands {
			if !s.Hidden {
				walk(append(slices.Clone(prefix), s.Name), s)
			}
		}
	}
	walk(nil, a.rootCommand())
	return paths, cmds
}

// candidates runs acc with args and --generate-shell-completion, as
// urfave/cli's scripts (an older acc's) do at a Tab, and returns the words
// it offers.
func candidates(t *testing.T, args ...string) []string {
	t.Helper()
	return completeWith(t, func(string) string { return "" }, args...)
}

// candidatesAt is candidates as acc's own scripts ask: the last of args is
// the word being completed, "" after a space.
func candidatesAt(t *testing.T, args ...string) []string {
	t.Helper()
	return completeWith(t, func(k string) string {
		if k == "ACC_COMPLETE_CURRENT" {
			return "1"
		}
		return ""
	}, args...)
}

func completeWith(t *testing.T, getenv func(string) string, args ...string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: getenv,
		Environ: func() []string { return nil }, Getwd: os.Getwd}
	if code := Main(append(args, "--generate-shell-completion"), env); code != 0 || errOut.Len() > 0 {
		t.Fatalf("acc %s --generate-shell-completion: exit %d, stderr %q", strings.Join(args, " "), code, errOut.String())
	}
	var words []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, ":") { // a directive to the script
			words = append(words, line)
		} else if word, _, _ := strings.Cut(line, ":"); word != "" {
			words = append(words, word)
		}
	}
	return words
}

// TestCompletionOffersOnlyWhatRuns: at a Tab after any command, acc offers
// its subcommands or its flags, never `help` below the root (where it is an
// unexpected argument, exit 2), never a flag already given that takes one
// value, and never a word the command does not accept.
func TestCompletionOffersOnlyWhatRuns(t *testing.T) {
	paths, cmds := commandPaths()
	for i, path := range paths {
		got := candidates(t, path...)
		if len(got) == 0 {
			t.Errorf("acc %s<Tab> offers nothing (the shell would offer file names)", strings.Join(append(path, ""), " "))
		}
		for _, word := range got {
			ok := false
			if name, isFlag := strings.CutPrefix(word, "--"); isFlag {
				// its own flags, the root's (--json, --cwd, --workspace) and --help
				ok = name == "help" || slices.ContainsFunc(append(slices.Clone(cmds[i].Flags), cmds[0].Flags...), func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
			} else {
				ok = slices.ContainsFunc(cmds[i].Commands, func(s *cli.Command) bool { return s.Name == word }) || (word == "help" && len(path) == 0)
			}
			if !ok {
				t.Errorf("acc %s<Tab> offers %q, which that command does not take", strings.Join(append(path, ""), " "), word)
			}
		}
		if len(path) > 0 && slices.Contains(got, "help") {
			t.Errorf("acc %s<Tab> offers help, which fails there", strings.Join(append(path, ""), " "))
		}
		if len(path) == 0 && !slices.Contains(got, "help") {
			t.Errorf("acc <Tab> does not offer help")
		}
	}
	if got := candidates(t, "claim", "--resource", "file:src/x.go"); slices.Contains(got, "--resource") || !slices.Contains(got, "--mode") {
		t.Errorf("acc claim --resource file:src/x.go <Tab> offers %q; want the other flags without --resource", got)
	}
	if got := candidates(t, "work", "--hint", "file:a"); !slices.Contains(got, "--hint") {
		t.Errorf("acc work --hint file:a <Tab> offers %q; --hint repeats, so it stays", got)
	}
}

// TestCompletionValues: a flag that takes one of a few words completes to
// them, and each is a word its usage names, so help and Tab agree; every
// entry of the table names a flag that exists.
func TestCompletionValues(t *testing.T) {
	paths, cmds := commandPaths()
	table := flagValueTable()
	found := map[string]bool{}
	for i, path := range paths {
		for _, f := range cmds[i].Flags {
			key := strings.Join(append([]string{"acc"}, path...), " ") + " --" + f.Names()[0]
			values, ok := table[key]
			if !ok {
				continue
			}
			found[key] = true
			usage := f.(cli.DocGenerationFlag).GetUsage()
			for _, v := range values {
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).MatchString(usage) {
					t.Errorf("%s completes to %q, which its usage %q does not name", key, v, usage)
				}
			}
			if got := candidates(t, append(path, "--"+f.Names()[0])...); !slices.Equal(got, values) {
				t.Errorf("%s <Tab> offers %q, want %q", key, got, values)
			}
		}
	}
	for key := range table {
		if !found[key] {
			t.Errorf("flagValueTable has %q, which is no flag of the command tree", key)
		}
	}
	if got, want := candidates(t, "message", "--type"), []string{"note", "question", "request", "decision"}; !slices.Equal(got, want) {
		t.Errorf("acc message --type <Tab> offers %q, want %q (answers come from reply, handoffs from finish)", got, want)
	}
	if got := candidates(t, "message", "--subject"); len(got) != 0 {
		t.Errorf("acc message --subject <Tab> offers %q; a free text has no candidates", got)
	}
}

// TestCompletionPlaces: what a Tab offers where urfave/cli's own answers
// went wrong — `acc help` completes to the commands; after "--" a command
// that takes no arguments offers nothing; a one-value flag given already
// offers nothing (a second is refused); and each flag that takes a path
// or a resource asks the script for names, by the placeholder help shows.
func TestCompletionPlaces(t *testing.T) {
	if got := candidatesAt(t, "help", ""); !slices.Contains(got, "status") || !slices.Contains(got, "completion") || slices.ContainsFunc(got, func(w string) bool { return strings.HasPrefix(w, "-") }) {
		t.Errorf("acc help <Tab> offers %q; want the command names", got)
	}
	if got := candidatesAt(t, "help", "completion", ""); !slices.Equal(got, []string{"bash", "zsh", "fish"}) {
		t.Errorf("acc help completion <Tab> offers %q", got)
	}
	if got := candidatesAt(t, "status", "--", ""); len(got) != 0 {
		t.Errorf("acc status -- <Tab> offers %q; every word there is refused", got)
	}
	if got := candidatesAt(t, "status", "--"); !slices.Contains(got, "--json") {
		t.Errorf("acc status --<Tab> offers %q; want the flags", got)
	}
	if got := candidatesAt(t, "acp", "--", ""); !slices.Equal(got, []string{filesDirective}) {
		t.Errorf("acc acp -- <Tab> offers %q; the agent's command line gets file names", got)
	}
	if got := candidatesAt(t, "claim", "--mode", "shared", "--mode", ""); len(got) != 0 {
		t.Errorf("acc claim --mode shared --mode <Tab> offers %q; a second --mode is refused", got)
	}
	if got := candidatesAt(t, "work", "--hint", "file:a", "--hint", ""); !slices.Equal(got, []string{resourcesDirective}) {
		t.Errorf("acc work --hint file:a --hint <Tab> offers %q; --hint repeats", got)
	}
	paths, cmds := commandPaths()
	for i, path := range paths {
		for _, f := range append(slices.Clone(cmds[i].Flags), cmds[0].Flags...) {
			df := f.(cli.DocGenerationFlag)
			if !df.TakesValue() {
				continue
			}
			key := strings.Join(append([]string{"acc"}, path...), " ") + " --" + f.Names()[0]
			if _, ok := flagValueTable()[key]; ok {
				continue
			}
			var want []string
			switch m := placeholderPattern.FindStringSubmatch(df.GetUsage()); {
			case m == nil:
			case m[1] == "RESOURCE" || strings.HasPrefix(m[1], "file:"):
				want = []string{resourcesDirective}
			case m[1] == "DIR":
				want = []string{dirsDirective}
			case m[1] == "FILE" || m[1] == "PATH":
				want = []string{filesDirective}
			}
			if got := candidatesAt(t, append(path, "--"+f.Names()[0], "")...); !slices.Equal(got, want) {
				t.Errorf("%s <Tab> offers %q, want %q", key, got, want)
			}
		}
	}
	for _, key := range []string{"status --cwd", "doctor --home", "install --home"} {
		if got := candidatesAt(t, append(strings.Fields(key), "")...); !slices.Equal(got, []string{dirsDirective}) {
			t.Errorf("acc %s <Tab> offers %q; want directory names", key, got)
		}
	}
	for _, key := range []string{"status --workspace", "certify --client"} {
		if got := candidatesAt(t, append(strings.Fields(key), "")...); !slices.Equal(got, []string{filesDirective}) {
			t.Errorf("acc %s <Tab> offers %q; want file names", key, got)
		}
	}
	for _, key := range []string{"claim --resource", "release --resource", "wait --released", "work --hint"} {
		if got := candidatesAt(t, append(strings.Fields(key), "")...); !slices.Equal(got, []string{resourcesDirective}) {
			t.Errorf("acc %s <Tab> offers %q; want file: and a path", key, got)
		}
	}
}

// TestCompletionInlineValue: --name=VALUE completes VALUE as --name VALUE
// would, every flag of every command: the words it takes after "--name="
// as typed, the same directive for a path or a resource (the scripts
// complete after the "="), nothing for a flag that takes no value, is
// unknown, or is given already and takes one value.
func TestCompletionInlineValue(t *testing.T) {
	paths, cmds := commandPaths()
	for i, path := range paths {
		for _, f := range append(slices.Clone(cmds[i].Flags), cmds[0].Flags...) {
			name := f.Names()[0]
			var want []string
			if takesValue(f) {
				for _, w := range candidatesAt(t, append(slices.Clone(path), "--"+name, "")...) {
					if !strings.HasPrefix(w, ":") {
						w = "--" + name + "=" + w
					}
					want = append(want, w)
				}
			}
			if got := candidatesAt(t, append(slices.Clone(path), "--"+name+"=")...); !slices.Equal(got, want) {
				t.Errorf("acc %s --%s=<Tab> offers %q, want %q", strings.Join(path, " "), name, got, want)
			}
		}
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"message", "--type="}, []string{"--type=note", "--type=question", "--type=request", "--type=decision"}},
		{[]string{"message", "--type=q"}, []string{"--type=note", "--type=question", "--type=request", "--type=decision"}},
		{[]string{"sync", "--scope=d"}, []string{"--scope=delta", "--scope=full", "--scope=history"}},
		{[]string{"status", "--cwd="}, []string{dirsDirective}},
		{[]string{"status", "--workspace=s"}, []string{filesDirective}},
		{[]string{"claim", "--resource=file:s"}, []string{resourcesDirective}},
		{[]string{"work", "--hint", "file:a", "--hint="}, []string{resourcesDirective}},
		{[]string{"claim", "--mode", "shared", "--mode="}, nil},
		{[]string{"message", "--subject="}, nil},
		{[]string{"status", "--json="}, nil},
		{[]string{"status", "--nosuch="}, nil},
		{[]string{"message", "--subject", "--type="}, nil}, // the value of --subject: a text
		{[]string{"status", "--", "--cwd="}, nil},
	} {
		if got := candidatesAt(t, tc.words...); !slices.Equal(got, tc.want) {
			t.Errorf("acc %s<Tab> offers %q, want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

// TestCompletionBashKeepsToBash3: the bash script uses nothing bash 3.2
// (macOS's /bin/bash) lacks — no associative arrays, case changes,
// mapfile, namerefs, negative subscripts, ;& or |&, @ transformations —
// and compopt, which bash 3 does not have, only with its complaint sent
// to /dev/null.
func TestCompletionBashKeepsToBash3(t *testing.T) {
	script := completionScripts["bash"]
	for _, bad := range []struct{ what, pattern string }{
		{"an associative array", `\b(declare|local|typeset) -[a-zA-Z]*A`},
		{"a nameref", `\b(declare|local|typeset) -[a-zA-Z]*n`},
		{"a case change", `\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?(,|\^)`},
		{"an @ transformation", `\$\{[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?@[A-Za-z]\}`},
		{"mapfile", `\b(mapfile|readarray)\b`},
		{"a negative subscript", `\[-[0-9]+\]`},
		{"a case fall-through", `;;?&`},
		{"|& or &>>", `\|&|&>>`},
		{"coproc", `\bcoproc\b`},
	} {
		if m := regexp.MustCompile(bad.pattern).FindString(script); m != "" {
			t.Errorf("the bash script has %s (%q), which bash 3.2 does not know", bad.what, m)
		}
	}
	for _, line := range strings.Split(script, "\n") {
		if code, _, _ := strings.Cut(line, "#"); strings.Contains(code, "compopt ") && !strings.Contains(code, "type -t compopt") && !strings.Contains(code, "2>/dev/null") {
			t.Errorf("the bash script runs compopt without 2>/dev/null (bash 3 has none): %q", line)
		}
	}
}
