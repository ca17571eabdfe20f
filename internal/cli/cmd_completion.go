package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/acc-go/acc/internal/certify"
	"github.com/acc-go/acc/internal/hook"
	"github.com/acc-go/acc/internal/install"
	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// completionShells are the shells acc completion writes a script for, in
// the order help lists them.
var completionShells = []string{"bash", "zsh", "fish"}

// completionCommand is `acc completion SHELL`: urfave/cli's scripts, which
// ask `acc … --generate-shell-completion` for the candidates at each Tab,
// with the bash one made to work without the bash-completion package.
// (The library adds a hidden completion command of its own, offering
// PowerShell too; rootCommand drops it for this one.)
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
			"script asks acc itself for the candidates, so they follow the acc on your PATH: the commands, a\n" +
			"command's flags, and the words a flag such as --type or --scope takes. The bash script works\n" +
			"with or without the bash-completion package. There is no script for PowerShell or any other shell.\n\n" +
			"  source <(acc completion bash)\n" +
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

// completionScript renders urfave/cli's script for shell, naming acc.
func completionScript(shell string) (string, error) {
	var out bytes.Buffer
	gen := &cli.Command{Name: "acc", EnableShellCompletion: true, Writer: &out, ErrWriter: io.Discard,
		ExitErrHandler: func(context.Context, *cli.Command, error) {}}
	if err := gen.Run(context.Background(), []string{"acc", "completion", shell}); err != nil {
		return "", fmt.Errorf("render the %s completion script: %w", shell, err)
	}
	if shell != "bash" {
		return out.String(), nil
	}
	return patchBashCompletion(out.String())
}

// bashInitTail is where urfave/cli's bash script calls bash-completion's
// _get_comp_words_by_ref unconditionally: without that package every Tab
// printed "_get_comp_words_by_ref: command not found" and completed nothing.
const bashInitTail = `  else
    _get_comp_words_by_ref "$@" cur prev words cword
  fi
`

// bashInitFallback keeps bash-completion's helper where it is installed and
// otherwise takes the words from bash itself (acc's flags take their values
// after a space, so the = and : that bash-completion rejoins do not matter).
const bashInitFallback = `  elif declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
    _get_comp_words_by_ref "$@" cur prev words cword
  else
    # No bash-completion package: bash's own COMP_WORDS and COMP_CWORD.
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
    cur=${COMP_WORDS[COMP_CWORD]}
  fi
`

// patchBashCompletion gives the bash script its fallback. A script that
// no longer has the expected call (a new urfave/cli) is an error, not a
// script that fails at every Tab.
func patchBashCompletion(script string) (string, error) {
	if strings.Count(script, bashInitTail) != 1 {
		return "", fmt.Errorf("urfave/cli's bash completion script changed: it no longer calls _get_comp_words_by_ref as acc expects; update patchBashCompletion")
	}
	return strings.Replace(script, bashInitTail, bashInitFallback, 1), nil
}

// dropLibraryCompletion removes the completion command urfave/cli adds
// when its root is set up, so that `acc completion` is acc's.
func dropLibraryCompletion(root *cli.Command) func(*cli.Command) {
	return func(lib *cli.Command) {
		root.Commands = slices.DeleteFunc(root.Commands, func(c *cli.Command) bool { return c == lib })
	}
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

// shellComplete answers `acc … --generate-shell-completion`, the request
// every completion script makes at a Tab (docs/cli.md, acc completion). It
// replaces urfave/cli's default, which offered `help` after every command: a
// command without subcommands has no `help` to run (`acc status help` is
// an unexpected argument, exit 2), so only the root offers it. What it
// offers for the word being completed:
//
//   - after a flag that takes one of a few words (--type, --scope, …):
//     those words (completionValues); after any other value-taking flag,
//     nothing, so the shell falls back to file names;
//   - for a word starting with "-": the command's flags by that prefix;
//   - otherwise the subcommands of a command that has them, and the flags
//     of one that has none.
//
// A flag already given that takes one value is not offered again: a
// second one is refused.
func (a *app) shellComplete(_ context.Context, cmd *cli.Command) {
	w := cmd.Root().Writer
	args := cmd.Args().Slice()
	last := ""
	if len(args) > 0 {
		last = args[len(args)-1]
	}
	flags := completionFlags(cmd)
	if name, inline, ok := flagToken(last); ok && !inline {
		for _, f := range flags {
			if df, ok := f.(cli.DocGenerationFlag); ok && df.TakesValue() && slices.Contains(f.Names(), name) {
				for _, v := range completionValues(cmd, f.Names()[0]) {
					fmt.Fprintln(w, v)
				}
				return
			}
		}
	}
	if strings.HasPrefix(last, "-") {
		printFlagCandidates(w, cmd, flags, strings.TrimLeft(last, "-"))
		return
	}
	var subs []*cli.Command
	for _, s := range cmd.Commands {
		if !s.Hidden && (s.Name != "help" || cmd.Root() == cmd) {
			subs = append(subs, s)
		}
	}
	if len(subs) == 0 {
		printFlagCandidates(w, cmd, flags, "")
		return
	}
	for _, s := range subs {
		fmt.Fprintf(w, "%s:%s\n", s.Name, s.Usage)
	}
}

// completionFlags are the flags cmd accepts that help shows: its own and
// the root's (--json, --cwd, --workspace).
func completionFlags(cmd *cli.Command) []cli.Flag {
	flags := cmd.VisibleFlags()
	for _, f := range cmd.VisiblePersistentFlags() {
		if !slices.Contains(flags, f) {
			flags = append(flags, f)
		}
	}
	return flags
}

// printFlagCandidates writes "--name:usage" for each flag whose name starts
// with prefix, leaving out one already given that cannot be repeated.
func printFlagCandidates(w io.Writer, cmd *cli.Command, flags []cli.Flag, prefix string) {
	for _, f := range flags {
		name := f.Names()[0]
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if _, repeatable := f.(*cli.StringSliceFlag); f.IsSet() && !repeatable {
			continue
		}
		usage := ""
		if df, ok := f.(cli.DocGenerationFlag); ok {
			usage = df.GetUsage()
		}
		if usage != "" {
			fmt.Fprintf(w, "--%s:%s\n", name, usage)
		} else {
			fmt.Fprintf(w, "--%s\n", name)
		}
	}
}

// completionValues lists the words a flag of cmd takes, for completion; nil
// for a flag whose value is free (an id, a text, a path). Each list is the
// one the command checks, or what its usage names (TestCompletionValues holds the
// two together).
func completionValues(cmd *cli.Command, flag string) []string {
	return flagValueTable()[cmd.FullName()+" --"+flag]
}

// flagValueTable maps "acc COMMAND --flag" to the words the flag takes.
func flagValueTable() map[string][]string {
	installers := []string{}
	for id, ad := range hook.Registry() {
		if _, ok := ad.(adapter.Installer); ok {
			installers = append(installers, id)
		}
	}
	slices.Sort(installers)
	harnesses := append(slices.Sorted(maps.Keys(hook.Registry())), "mcp", "cli")
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
