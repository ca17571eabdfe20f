package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

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
			"script asks acc itself for the candidates, so they follow the acc on your PATH. The bash script works\n" +
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
