package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/acc-go/acc/internal/certify"
	"github.com/acc-go/acc/internal/clients"
	"github.com/acc-go/acc/internal/install"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// completionShells are the shells acc completion writes a script for, in
// the order help lists them.
var completionShells = []string{"bash", "zsh", "fish"}

// completionCommand is `acc completion SHELL`: acc's own scripts
// (completionScripts), which ask acc for the candidates at each Tab
// (completionCandidates); the bash one works with or without the
// bash-completion package.
func (a *app) completionCommand() *cli.Command {
	var subs []*cli.Command
	for _, shell := range completionShells {
		subs = append(subs, &cli.Command{
			Name:  shell,
			Usage: "print the " + shell + " completion script",
			Action: func(ctx context.Context, cmd *cli.Command) error {
				script, err := completionScript(shell)
				if err != nil {
					return err
				}
				return a.emit(map[string]string{"shell": shell, "script": script}, func(w io.Writer) { io.WriteString(w, script) })
			},
		})
	}
	return &cli.Command{
		Name:      "completion",
		Category:  "setup",
		ArgsUsage: "bash|zsh|fish",
		UsageText: "acc completion bash|zsh|fish",
		Usage:     "print a script that completes acc's commands and flags on Tab, for bash, zsh or fish",
		Description: "completion prints a script for your shell; load it from the shell's startup file. At each Tab the\n" +
			"script asks acc itself for the candidates, so they follow the acc on your PATH: the commands (also\n" +
			"after acc help), a command's flags, the words a flag such as --type or --scope takes (also as\n" +
			"--type=…), directory names for --cwd and --home, file names for --workspace, and file: with a path\n" +
			"(from where you are) for --resource, --released and --hint. Where nothing fits — after --, for a\n" +
			"free text or an id, for a flag given already that takes one value — it offers nothing, not file\n" +
			"names acc would refuse. The bash script works with or without the bash-completion package, and in\n" +
			"bash 3.2 (macOS's /bin/bash), which loads it with eval \"$(acc completion bash)\" since source <(…)\n" +
			"reads nothing there. There is no script for PowerShell or any other shell; a script printed by an\n" +
			"older acc keeps working, with its old answers.\n\n" +
			"  source <(acc completion bash)\n" +
			"  eval \"$(acc completion bash)\"   # bash 3.2 (macOS)\n" +
			"  source <(acc completion zsh)    # after compinit\n" +
			"  acc completion fish > ~/.config/fish/completions/acc.fish",
		Commands: subs,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return cli.ShowSubcommandHelp(cmd)
			}
			shell := cmd.Args().First()
			return protocol.Errorf(protocol.ReasonUsage, "acc completion writes scripts for bash, zsh and fish only, not %q: run acc completion bash, zsh or fish", shell).With("shell", shell)
		},
	}
}

// completionScript is acc's script for shell (completionScripts).
func completionScript(shell string) (string, error) {
	script, ok := completionScripts[shell]
	if !ok {
		return "", fmt.Errorf("no completion script for %s", shell)
	}
	return script, nil
}

// The protocol between the scripts and acc. At a Tab a script runs
//
//	ACC_COMPLETE_CURRENT=1 acc WORD… CURRENT --generate-shell-completion
//
// with the words before the cursor and the word being completed (empty
// after a space), and acc prints one candidate a line, "word:description",
// or one of the directives below alone; nothing means nothing fits, and
// the script then offers nothing (no file names: they would be refused).
// Without ACC_COMPLETE_CURRENT (urfave/cli's scripts, which an older acc
// printed) the word being completed is there only when it starts with "-".
const (
	completionRequest = "--generate-shell-completion"
	// filesDirective: complete file and directory names (--workspace FILE).
	filesDirective = ":files"
	// dirsDirective: complete directory names only (--cwd DIR).
	dirsDirective = ":dirs"
	// resourcesDirective: complete file: followed by a path (--resource).
	resourcesDirective = ":resources"
)

// complete answers a completion request: tokens are acc's arguments
// without the final completionRequest (docs/cli.md#acc-completion).
func (a *app) complete(tokens []string) int {
	root := a.rootCommand()
	before, cur := tokens, ""
	n := len(tokens)
	ours := a.env.Getenv("ACC_COMPLETE_CURRENT") == "1"
	switch {
	case n == 0:
	case ours:
		before, cur = tokens[:n-1], tokens[n-1]
	case strings.HasPrefix(tokens[n-1], "-") && completionPlace(root, tokens).value == nil:
		// urfave/cli's scripts: a last word starting with "-" is the one
		// being completed, unless it is a flag that takes a value.
		before, cur = tokens[:n-1], tokens[n-1]
	}
	// zsh and fish show each candidate's usage as its description: without
	// backticks, urfave/cli's marks for help's placeholders.
	w := plainCandidates{a.env.Stdout}
	for _, line := range completionCandidates(root, before, cur) {
		if !ours && strings.HasPrefix(line, ":") {
			continue // urfave/cli's scripts know no directive: they fall back to file names
		}
		fmt.Fprintln(w, line)
	}
	return 0
}

// completionCandidates is what a Tab offers for the word cur after the
// words before (acc's arguments), read from the command tree itself:
//
//   - after a flag that takes a value: the words it takes (--type, --scope,
//     … from flagValueTable), the dirs directive for a directory
//     (placeholder DIR), the files directive for a path (FILE or PATH),
//     the resources directive for a resource (RESOURCE, file:PATH), else
//     nothing (a free text or an id); and nothing for a flag already given
//     that takes one value (giving it twice is refused);
//   - for a word --name=VALUE: the same for VALUE, the words after
//     "--name=" (inlineValueCandidates);
//   - after "--": nothing, since every word there is an argument and only
//     acc acp takes any (its agent's command line: file names);
//   - after `acc help`: the command names the words lead to;
//   - for a word starting with "-": the command's flags by that prefix,
//     but those already given that take one value;
//   - otherwise the subcommands of a command that has them (and help at
//     the root), and the flags of one that has none — never `help` below
//     the root, where it is an unexpected argument.
func completionCandidates(root *cli.Command, before []string, cur string) []string {
	at := completionPlace(root, before)
	switch {
	case at.dashDash:
		if strings.HasPrefix(at.cmd.ArgsUsage, "--") {
			return []string{filesDirective}
		}
		return nil
	case at.value != nil:
		name := at.value.Names()[0]
		if _, repeatable := at.value.(*cli.StringSliceFlag); at.given[name] && !repeatable {
			return nil
		}
		return valueCandidates(at.path, at.value)
	}
	var out []string
	if at.help {
		for _, s := range visibleCommands(at.cmd) {
			out = append(out, s.Name+":"+s.Usage)
		}
		return out
	}
	if name, inline, ok := flagToken(cur); ok && inline {
		return inlineValueCandidates(root, at, name, cur[:strings.Index(cur, "=")+1])
	}
	if strings.HasPrefix(cur, "-") || len(visibleCommands(at.cmd)) == 0 {
		prefix := strings.TrimLeft(cur, "-")
		for _, f := range completionFlags(root, at.cmd) {
			name := f.Names()[0]
			if _, repeatable := f.(*cli.StringSliceFlag); !strings.HasPrefix(name, prefix) || at.given[name] && !repeatable {
				continue
			}
			out = append(out, "--"+name+":"+f.(cli.DocGenerationFlag).GetUsage())
		}
		return out
	}
	for _, s := range visibleCommands(at.cmd) {
		out = append(out, s.Name+":"+s.Usage)
	}
	if at.cmd == root {
		out = append(out, "help:"+cli.UsageCommandHelp)
	}
	return out
}

// inlineValueCandidates is what `--name=` (spelled, as typed) followed by
// a value completes to: the words of the flag's value after spelled, or
// the directive for its value, which the scripts then complete after the
// "=", keeping it; nothing for a flag that takes no value, is no flag of
// the command, or is given already and takes one value.
func inlineValueCandidates(root *cli.Command, at place, name, spelled string) []string {
	f := completionFlag(root, at.cmd, name)
	if f == nil || !takesValue(f) {
		return nil
	}
	if _, repeatable := f.(*cli.StringSliceFlag); at.given[f.Names()[0]] && !repeatable {
		return nil
	}
	var out []string
	for _, c := range valueCandidates(at.path, f) {
		if !strings.HasPrefix(c, ":") {
			c = spelled + c
		}
		out = append(out, c)
	}
	return out
}

// place is where the words before the cursor leave a completion.
type place struct {
	cmd      *cli.Command
	path     string          // "acc claim"
	help     bool            // after `acc help`: the words name a command
	given    map[string]bool // the flags given, by name
	value    cli.Flag        // the flag whose value the next word is, if any
	dashDash bool            // past "--"
}

// completionPlace reads the words before the cursor as acc would parse
// them: subcommands, flags with their values, arguments.
func completionPlace(root *cli.Command, before []string) place {
	at := place{cmd: root, path: "acc", given: map[string]bool{}}
	for i := 0; i < len(before); i++ {
		tok := before[i]
		if tok == "--" {
			at.dashDash = true
			return at
		}
		if name, inline, ok := flagToken(tok); ok {
			f := completionFlag(root, at.cmd, name)
			if f == nil {
				continue
			}
			if takesValue(f) && !inline {
				if i+1 == len(before) {
					at.value = f
					return at
				}
				i++ // its value
			}
			at.given[f.Names()[0]] = true
			continue
		}
		if at.cmd == root && !at.help && (tok == "help" || tok == "h") {
			at.help = true
			continue
		}
		if sub := visibleCommand(at.cmd, tok); sub != nil {
			at.cmd, at.path = sub, at.path+" "+sub.Name
		}
		// any other word is an argument (acc completion's shell)
	}
	return at
}

// valueCandidates is what the value of flag f of the command at path
// completes to (completionCandidates).
func valueCandidates(path string, f cli.Flag) []string {
	if words, ok := flagValueTable()[path+" --"+f.Names()[0]]; ok {
		return words
	}
	placeholder := ""
	if m := placeholderPattern.FindStringSubmatch(f.(cli.DocGenerationFlag).GetUsage()); m != nil {
		placeholder = m[1]
	}
	switch {
	case placeholder == "RESOURCE" || strings.HasPrefix(placeholder, "file:"):
		return []string{resourcesDirective}
	case placeholder == "DIR":
		return []string{dirsDirective}
	case placeholder == "FILE" || placeholder == "PATH":
		return []string{filesDirective}
	}
	return nil
}

// plainCandidates writes the completion candidates ("--subject:one-line
// TEXT …") without backticks: in a flag's usage they mark the placeholder
// for help (`TEXT` shows as --subject TEXT), and zsh and fish would show
// them as they are.
type plainCandidates struct{ w io.Writer }

func (p plainCandidates) Write(b []byte) (int, error) {
	if _, err := p.w.Write(bytes.ReplaceAll(b, []byte("`"), nil)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// placeholderPattern finds the `PLACEHOLDER` of a flag's usage.
var placeholderPattern = regexp.MustCompile("`([^`]+)`")

// visibleCommands are cmd's subcommands that help lists.
func visibleCommands(cmd *cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, s := range cmd.Commands {
		if !s.Hidden {
			out = append(out, s)
		}
	}
	return out
}

func visibleCommand(cmd *cli.Command, name string) *cli.Command {
	for _, s := range visibleCommands(cmd) {
		if s.Name == name || slices.Contains(s.Aliases, name) {
			return s
		}
	}
	return nil
}

// completionFlags are the flags cmd accepts that help shows: its own, the
// root's (--json, --cwd, --workspace) and --help.
func completionFlags(root, cmd *cli.Command) []cli.Flag {
	flags := slices.Clone(cmd.Flags)
	if cmd != root {
		flags = append(flags, root.Flags...)
	}
	flags = append(flags, cli.HelpFlag)
	return slices.DeleteFunc(flags, func(f cli.Flag) bool {
		v, ok := f.(cli.VisibleFlag)
		return ok && !v.IsVisible()
	})
}

// completionFlag is the flag of cmd (or the root's) called name, or nil.
func completionFlag(root, cmd *cli.Command, name string) cli.Flag {
	for _, f := range completionFlags(root, cmd) {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	df, ok := f.(cli.DocGenerationFlag)
	return ok && df.TakesValue()
}

// flagValueTable maps "acc COMMAND --flag" to the words the flag takes.
func flagValueTable() map[string][]string {
	installers := slices.Sorted(maps.Keys(clients.Installers()))
	harnesses := harnessNames()
	return map[string][]string{
		"acc attach --harness":     harnesses,
		"acc work --mode":          protocol.IntentModes,
		"acc work --state":         protocol.IntentStates,
		"acc claim --mode":         {protocol.ClaimExclusive, protocol.ClaimShared},
		"acc claim --enforcement":  {protocol.EnforcementAdvisory, protocol.EnforcementGuarded},
		"acc release --authority":  {"human", "policy"},
		"acc message --type":       {protocol.KindNote, protocol.KindQuestion, protocol.KindRequest, protocol.KindDecision},
		"acc message --obligation": {protocol.ObligationNone, protocol.ObligationAcknowledge, protocol.ObligationReply},
		"acc finish --status":      {protocol.HandoffComplete, protocol.HandoffPartial, protocol.HandoffBlocked},
		"acc sync --scope":         {core.SyncScopeDelta, core.SyncScopeFull, core.SyncScopeHistory},
		"acc sync --type":          protocol.MessageKinds,
		"acc install --adapter":    installers,
		"acc install --delivery":   install.DeliveryPolicies,
		"acc uninstall --adapter":  installers,
		"acc certify --adapter":    certify.Supported(),
	}
}
