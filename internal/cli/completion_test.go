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

// candidates runs acc with args and --generate-shell-completion, as every
// completion script does at a Tab, and returns the words it offers.
func candidates(t *testing.T, args ...string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" },
		Environ: func() []string { return nil }, Getwd: os.Getwd}
	if code := Main(append(args, "--generate-shell-completion"), env); code != 0 || errOut.Len() > 0 {
		t.Fatalf("acc %s --generate-shell-completion: exit %d, stderr %q", strings.Join(args, " "), code, errOut.String())
	}
	var words []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if word, _, _ := strings.Cut(line, ":"); word != "" {
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
