// Package cli is the `acc` command tree: flag parsing (urfave/cli/v3 with its
// defaults corrected where they break acc's contract), caller identity,
// output (text, or one JSON envelope with --json) and the mapping of errors
// to exit codes. Every rule lives in pkg/core; a command here only parses,
// calls core and prints.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/acc-go/acc/internal/buildinfo"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/urfave/cli/v3"
)

// Env is the process context a command runs in; tests replace it.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        func() []string
	Getwd          func() (string, error)
}

// DefaultEnv is the real process environment.
func DefaultEnv() Env {
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ, Getwd: os.Getwd}
}

// StoreWait bounds how long a command waits for a busy store
// (docs/decisions.md#16-store-busy).
const StoreWait = 5 * time.Second

// Main runs acc with args (without the program name) and returns the exit
// code: 0 ok, 2 usage, 3 timeout, 4 data, 5 conflict, 1 a bug
// (protocol.ExitCodes). It never calls os.Exit and never panics.
func Main(args []string, env Env) (code int) {
	// ACC_BYPASS=1 acc acp [flags] -- AGENT…: the agent runs in acc's place
	// before anything of acc looks at the command line — but for a Tab in a
	// shell, which acc answers itself: run, the agent would start at each
	// Tab with the words typed so far.
	tab := len(args) > 0 && args[len(args)-1] == completionRequest
	if env.Getenv("ACC_BYPASS") == "1" && firstWord(args) == "acp" && !tab {
		if i := slices.Index(args, "--"); i >= 0 && i+1 < len(args) {
			return execAgent(env, args[i+1:])
		}
	}
	if firstWord(args) == "search" && !tab {
		args = searchArgs(args) // a Tab completes the words as typed
	}
	// acc acp's stdout is the editor's channel: nothing of acc's own goes
	// there, --json or not.
	a := &app{env: env, jsonMode: jsonRequested(args) && firstWord(args) != "acp", args: args}
	defer func() {
		if p := recover(); p != nil {
			code = a.fail(fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
		}
	}()
	if tab {
		return a.complete(args[:len(args)-1]) // a Tab in a shell (cmd_completion.go)
	}
	root := a.rootCommand()
	if a.jsonMode {
		savedHelp, savedVersion := cli.HelpPrinter, cli.VersionPrinter
		cli.HelpPrinter = a.jsonHelpPrinter
		cli.VersionPrinter = func(*cli.Command) { _ = a.emit(map[string]string{"version": Version()}, nil) }
		defer func() { cli.HelpPrinter, cli.VersionPrinter = savedHelp, savedVersion }()
	}
	err := root.Run(context.Background(), append([]string{"acc"}, args...))
	if err != nil {
		return a.fail(libraryError(err))
	}
	return a.exitCode
}

// helpTopicPattern matches urfave/cli's refusal of `acc help <unknown>`,
// which it returns as an exit-3 error of its own.
var helpTopicPattern = regexp.MustCompile(`^No help topic for '([^']*)'`)

// libraryError turns the errors urfave/cli raises outside its usage-error
// hook into acc's refusals, so they exit 2 instead of 1 (or the library's 3).
func libraryError(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return err
	}
	if m := helpTopicPattern.FindStringSubmatch(err.Error()); m != nil {
		return protocol.Errorf(protocol.ReasonUnknownCommand, "unknown command: %s - `acc help` lists them", m[1])
	}
	return err
}

// jsonRequested reads --json from raw arguments, so that even a parse failure
// prints its error as an envelope. It accepts every spelling urfave/cli
// parses as the flag (-json, --json, and either with =VALUE for any
// strconv.ParseBool value; the last one wins); after a successful parse
// checkArgs replaces the guess with the parsed value.
func jsonRequested(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if name != "json" {
			continue
		}
		if !hasVal {
			on = true
		} else if b, err := strconv.ParseBool(val); err == nil {
			on = b
		}
	}
	return on
}

type app struct {
	env      Env
	jsonMode bool
	args     []string
	printed  bool
	// exitCode is what a successful command exits with: 0, except for
	// acc acp, which exits as its agent did.
	exitCode int
}

// fail prints err (an envelope on stdout with --json, one line on stderr
// through screen otherwise) and returns its exit code.
func (a *app) fail(err error) int {
	pe := protocol.AsError(wording.CLIError(err))
	if a.jsonMode {
		b, _ := protocol.MarshalIndent(protocol.Failure(pe))
		fmt.Fprintln(a.env.Stdout, string(b))
	} else {
		fmt.Fprintf(screen{a.env.Stderr}, "acc: %s\n", pe.Message)
	}
	return int(pe.Code())
}

// emit prints a success: the envelope with --json (the exact text), else
// text through screen.
func (a *app) emit(data any, text func(w io.Writer)) error {
	if a.jsonMode {
		b, err := protocol.MarshalIndent(protocol.Success(data))
		if err != nil {
			return err
		}
		fmt.Fprintln(a.env.Stdout, string(b))
		return nil
	}
	if text != nil {
		text(screen{a.env.Stdout})
	}
	return nil
}

var (
	requiredFlagPattern = regexp.MustCompile(`Required flags? "([^"]+)" not set`)
	undefinedFlag       = regexp.MustCompile(`flag provided but not defined: -+(\S+)`)
	needsArgument       = regexp.MustCompile(`flag needs an argument: -+(\S+)`)
	invalidValue        = regexp.MustCompile(`invalid value "(.*)" for flag -+([^:\s]+):`)
)

// usageError turns a urfave/cli parse error into acc's exit-2 usage error
// with one line naming the fix.
func (a *app) usageError(cmd *cli.Command, err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return err
	}
	name := commandPath(cmd)
	msg := err.Error()
	if m := requiredFlagPattern.FindStringSubmatch(msg); m != nil {
		flags := strings.Split(m[1], ", ")
		for i := range flags {
			flags[i] = "--" + flags[i]
		}
		return protocol.Errorf(protocol.ReasonMissingFlag, "%s requires %s; see `%s --help`", name, strings.Join(flags, " and "), name)
	}
	if m := needsArgument.FindStringSubmatch(msg); m != nil {
		return protocol.Errorf(protocol.ReasonMissingFlag, "--%s needs a value; see `%s --help`", m[1], name)
	}
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		if cmd.Root() == cmd {
			if word := firstWord(a.args); word != "" && cmd.Command(word) == nil {
				return unknownCommand(cmd, word)
			}
		}
		if cmd.Name == "acp" {
			tok := "--" + m[1]
			for _, arg := range a.args {
				if strings.TrimLeft(strings.SplitN(arg, "=", 2)[0], "-") == m[1] && strings.HasPrefix(arg, "-") {
					tok = arg
					break
				}
			}
			return protocol.Errorf(protocol.ReasonUnknownFlag, "unknown option for acc acp: %s; the agent's command and its options go after --, e.g. acc acp -- gemini --acp", tok)
		}
		if near := nearFlag(cmd, m[1]); near != "" {
			return protocol.Errorf(protocol.ReasonUnknownFlag, "unknown option for %s: --%s; did you mean --%s? (see `%s --help`)", name, m[1], near, name)
		}
		return protocol.Errorf(protocol.ReasonUnknownFlag, "unknown option for %s: --%s; see `%s --help`", name, m[1], name)
	}
	if m := invalidValue.FindStringSubmatch(msg); m != nil {
		if m[1] == "" {
			return protocol.Errorf(protocol.ReasonMissingFlag, "--%s needs a value; see `%s --help`", m[2], name)
		}
		want := "a valid value"
		for _, f := range append(slices.Clone(cmd.Flags), cmd.Root().Flags...) {
			if !slices.Contains(f.Names(), m[2]) {
				continue
			}
			switch f.(type) {
			case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
				want = "a whole number"
			case *cli.BoolFlag:
				want = "no value (or =true, =false)"
			}
			break
		}
		return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--%s takes %s, not %q; see `%s --help`", m[2], want, m[1], name)
	}
	return protocol.Errorf(protocol.ReasonUsage, "%s: %s; see `%s --help`", name, msg, name)
}

func commandPath(cmd *cli.Command) string { return cmd.FullName() }

// checkArgs refuses a flag whose value is missing, positional arguments,
// empty values of set string flags, and a non-repeatable flag given twice
// (docs/cli.md#command-line-syntax).
func (a *app) checkArgs(ctx context.Context, cmd *cli.Command) (context.Context, error) {
	// The parsed flag is the truth (in `--body -json` it is text, not the
	// flag).
	a.jsonMode = cmd.Bool("json") && cmd.Name != "acp"
	if err := a.checkMissingValues(cmd); err != nil {
		return ctx, err
	}
	if cmd.Args().Len() > 0 && cmd.ArgsUsage == "" { // only acc acp (its agent) and acc completion (a shell it refuses) take arguments
		return ctx, protocol.Errorf(protocol.ReasonUnexpectedArgument, "unexpected argument %q for %s; flags take the form --name value", cmd.Args().First(), commandPath(cmd))
	}
	repeatable := map[string]bool{}
	for _, f := range cmd.Flags {
		switch f.(type) {
		case *cli.StringSliceFlag:
			for _, n := range f.Names() {
				repeatable[n] = true
			}
		}
	}
	// Count every spelling urfave/cli parses as a flag (-name and --name),
	// skipping the token that is a value-taking flag's value.
	takesValue := valueFlags(cmd)
	counts := map[string]int{}
	for i := 0; i < len(a.args); i++ {
		tok := a.args[i]
		if tok == "--" {
			break
		}
		name, inline, ok := flagToken(tok)
		if !ok {
			continue
		}
		counts[name]++
		if takesValue[name] && !inline {
			i++
		}
	}
	var twice []string
	for name, n := range counts {
		if n > 1 && !repeatable[name] && cmd.IsSet(name) {
			twice = append(twice, "--"+name)
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		return ctx, protocol.Errorf(protocol.ReasonUsage, "%s was given more than once; it takes one value", strings.Join(twice, ", "))
	}
	for _, f := range append(slices.Clone(cmd.Flags), cmd.Root().Flags...) {
		empty := false
		switch sf := f.(type) {
		case *cli.StringFlag:
			empty = cmd.IsSet(sf.Name) && cmd.String(sf.Name) == ""
		case *cli.StringSliceFlag:
			// A blank entry would otherwise reach core as a participant or
			// handoff line called "".
			empty = cmd.IsSet(sf.Name) && slices.ContainsFunc(cmd.StringSlice(sf.Name), func(v string) bool { return strings.TrimSpace(v) == "" })
		}
		if empty {
			return ctx, protocol.Errorf(protocol.ReasonMissingFlag, "--%s needs a value; see `%s --help`", f.Names()[0], commandPath(cmd))
		}
	}
	return ctx, nil
}

// flagToken returns the flag name a raw argument spells, and whether it
// carries its value inline (=value): urfave/cli parses both -name and --name.
// "-" alone and "--" are not flags.
func flagToken(tok string) (name string, inline, ok bool) {
	rest, ok := strings.CutPrefix(tok, "-")
	if !ok || rest == "" || rest == "-" {
		return "", false, false
	}
	name, _, inline = strings.Cut(strings.TrimPrefix(rest, "-"), "=")
	return name, inline, name != ""
}

// valueFlags maps every flag name of cmd and the root to whether it takes a
// value.
func valueFlags(cmd *cli.Command) map[string]bool {
	takesValue := map[string]bool{}
	for _, f := range append(slices.Clone(cmd.Flags), cmd.Root().Flags...) {
		df, ok := f.(cli.DocGenerationFlag)
		for _, n := range f.Names() {
			takesValue[n] = ok && df.TakesValue()
		}
	}
	return takesValue
}

// checkMissingValues refuses `--subject --body b`: a flag that takes a value
// followed by another of the command's options, which urfave/cli would take
// as the value (docs/cli.md#command-line-syntax). `--subject=--body` stays the
// literal text, and so does a value like `--help` that is no option here.
func (a *app) checkMissingValues(cmd *cli.Command) error {
	known := map[string]bool{}
	takesValue := map[string]bool{}
	for _, f := range append(slices.Clone(cmd.Flags), cmd.Root().Flags...) {
		df, ok := f.(cli.DocGenerationFlag)
		for _, n := range f.Names() {
			known[n] = true
			takesValue[n] = ok && df.TakesValue()
		}
	}
	delete(known, "help")
	delete(known, "h")
	for i := 0; i+1 < len(a.args); i++ {
		tok := a.args[i]
		if tok == "--" {
			break
		}
		name, ok := strings.CutPrefix(tok, "--")
		if !ok || strings.Contains(name, "=") || !takesValue[name] {
			continue
		}
		next, ok := strings.CutPrefix(a.args[i+1], "--")
		if next, _, _ = strings.Cut(next, "="); ok && known[next] {
			return protocol.Errorf(protocol.ReasonMissingFlag,
				"--%s needs a value before --%s (for that literal text write --%s=--%s); see `%s --help`", name, next, name, next, commandPath(cmd))
		}
		i++ // the next token is this flag's value
	}
	return nil
}

// Version is acc's version (internal/buildinfo).
func Version() string { return buildinfo.Version() }

func (a *app) rootCommand() *cli.Command {
	root := &cli.Command{
		Name:  "acc",
		Usage: "let independently opened AI coding sessions see each other, reserve files and exchange receipted messages",
		Description: "acc keeps one room per repository (all worktrees share it). Sessions attach, " +
			"send messages that are recorded before anything delivers them, read their inbox, " +
			"reply in threads and acknowledge. Exit codes: " + exitCodeLine() + ".",
		Version:                   Version(),
		Writer:                    a.env.Stdout,
		ErrWriter:                 a.env.Stderr,
		Reader:                    a.env.Stdin,
		Suggest:                   true,
		DisableSliceFlagSeparator: true,
		HideHelpCommand:           false,
		ExitErrHandler:            func(context.Context, *cli.Command, error) {},
		OnUsageError: func(ctx context.Context, cmd *cli.Command, err error, _ bool) error {
			return a.usageError(cmd, err)
		},
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print exactly one JSON envelope on stdout, errors included"},
			&cli.StringFlag{Name: "cwd", Usage: "run as if started in `DIR` (selects the workspace and the checkout)"},
			&cli.StringFlag{Name: "workspace", Usage: "use the acc.workspace.json at `FILE` instead of searching upwards"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return unknownCommand(cmd, cmd.Args().First())
			}
			return cli.ShowRootCommandHelp(cmd)
		},
		Commands: a.commands(),
	}
	var walk func(c *cli.Command)
	walk = func(c *cli.Command) {
		c.OnUsageError = root.OnUsageError
		if c != root && c.Action != nil && c.Before == nil {
			c.Before = a.checkArgs
		}
		for _, s := range c.Commands {
			walk(s)
		}
	}
	walk(root)
	return root
}

func exitCodeLine() string {
	var parts []string
	for _, e := range protocol.ExitCodes {
		parts = append(parts, fmt.Sprintf("%d %s", e.Code, e.Name))
	}
	return strings.Join(parts, ", ")
}

func (a *app) commands() []*cli.Command {
	return []*cli.Command{
		a.attachCommand(), a.heartbeatCommand(), a.detachCommand(),
		a.statusCommand(), a.workCommand(), a.claimCommand(), a.releaseCommand(),
		a.messageCommand(), a.requestCommand(), a.inboxCommand(), a.replyCommand(), a.ackCommand(), a.finishCommand(), a.waitCommand(), a.topCommand(),
		a.syncCommand(), a.searchCommand(),
		a.configCommand(), a.storeCommand(), a.installCommand(), a.uninstallCommand(), a.doctorCommand(), a.certifyCommand(), a.completionCommand(),
		a.acpCommand(), a.versionCommand(),
	}
}

func (a *app) versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print acc's version",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			v := Version()
			return a.emit(map[string]string{"version": v}, func(w io.Writer) { fmt.Fprintf(w, "acc %s\n", v) })
		},
	}
}

// firstWord returns the first argument that is neither a flag nor a flag's
// value, or "".
func firstWord(args []string) string {
	if i := firstWordIndex(args); i >= 0 {
		return args[i]
	}
	return ""
}

// firstWordIndex is the index in args of firstWord's word, or -1.
func firstWordIndex(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return -1
		}
		if strings.HasPrefix(a, "-") {
			if (a == "--cwd" || a == "--workspace") && i+1 < len(args) {
				i++
			}
			continue
		}
		return i
	}
	return -1
}

// nearFlag is the visible flag of cmd closest to word (without dashes),
// when one is within an edit per three letters (at least one, at most
// two), else "".
func nearFlag(cmd *cli.Command, word string) string {
	best, bestDist := "", min(2, max(1, len(word)/3))+1
	for _, f := range cmd.VisibleFlags() {
		for _, n := range f.Names() {
			if d := editDistance(word, n); d < bestDist && len(n) > 1 {
				best, bestDist = n, d
			}
		}
	}
	return best
}

// unknownCommand refuses an unknown command name, suggesting the closest
// known one.
func unknownCommand(root *cli.Command, word string) error {
	best, bestDist := "", 3
	for _, c := range root.Commands {
		for _, n := range c.Names() {
			if d := editDistance(word, n); d < bestDist {
				best, bestDist = c.Name, d
			}
		}
	}
	if best != "" {
		return protocol.Errorf(protocol.ReasonUnknownCommand, "unknown command: %s - did you mean `acc %s`? `acc help` lists them", word, best)
	}
	return protocol.Errorf(protocol.ReasonUnknownCommand, "unknown command: %s - `acc help` lists them", word)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
