package adapter

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// ShellEnv is what ReadShell may consult on this machine while it reads a
// command (docs/hooks.md#how-the-guard-reads-a-shell-command).
type ShellEnv struct {
	// Cwd is the absolute directory the command starts in (the payload's
	// cwd). Empty: relative globs are not expanded (their words are
	// unknown writes).
	Cwd string
	// Home is $HOME for ~ and $HOME; empty leaves such words unknown.
	Home string
	// ReadDir lists a directory for globs, sorted by name; nil means
	// os.ReadDir opening directories only (never blocking on a FIFO).
	ReadDir func(dir string) ([]fs.DirEntry, error)
	// Toplevel answers `git rev-parse --show-toplevel` run in the absolute
	// directory dir; nil, or ok false, leaves that substitution unknown.
	Toplevel func(dir string) (top string, ok bool)
	// ReadFile reads a file a command takes its writes from (the patch of
	// `patch -i FILE` or `patch < FILE`, the list of `xargs -a FILE`),
	// given its absolute path; a file over MaxShellReadFile bytes is not
	// used. Nil reads regular files only (never a FIFO or a device, which
	// could block), at most MaxShellReadFile+1 bytes of them.
	ReadFile func(name string) ([]byte, error)
}

// ShellReading is what a command would do to files as far as acc can tell
// before it runs (docs/hooks.md#how-the-guard-reads-a-shell-command).
type ShellReading struct {
	// Targets are the files the command writes, after expansion, without
	// duplicates in the order they appear: absolute, or relative to
	// ShellEnv.Cwd. A directory target (find's start path, tar's -C)
	// stands for everything under it.
	Targets []string
	// Git are the git invocations that may change the working tree or
	// sweep it into a commit; the paths they touch are for git to say.
	Git []GitOp
	// Unknown are writes whose target cannot be known before the command
	// runs.
	Unknown []UnknownWrite
	// Partial is non-nil, wrapping ErrShellUnparsable, when a syntax error
	// stopped the reading: what is above is what bash would run before
	// the error (and perhaps a little more: bash reads a whole line before
	// it runs it).
	Partial error
}

// GitOp is one git invocation that may change the working tree or sweep
// it into a commit.
type GitOp struct {
	// Dir is where git runs (after cd and -C): absolute, or relative to
	// ShellEnv.Cwd; "" is ShellEnv.Cwd.
	Dir string
	// Args are git's arguments after its global options, expanded,
	// subcommand first.
	Args []string
}

// UnknownWrite is a write whose target cannot be known before the command
// runs: a command substitution, a variable set outside the command, code
// given inline to an interpreter, a list read from input.
type UnknownWrite struct {
	// Why says in plain words what hides the target, for a deny reason;
	// it names at most a program, never the command's text.
	Why string
	// Dir is the directory relative hints are relative to: absolute, or
	// relative to ShellEnv.Cwd ("" is ShellEnv.Cwd). DirKnown is false
	// when a cd whose argument could not be read hid it.
	Dir      string
	DirKnown bool
	// Hints are the literal fragments of the command that could name what
	// it writes: path-like tokens of inline code, the literal parts of a
	// word that could not be expanded, a pattern that matches nothing now.
	// HintReaches says whether one reaches a path.
	Hints []string
}

// MaxShellReadFile is the most ReadShell reads of a file a command takes
// its writes from (a patch), in bytes; a longer one is an unknown write.
const MaxShellReadFile = 1 << 20

// maxGlobEntries bounds the directory entries ReadShell lists for globs
// in one command; past it, the words still to be expanded are unknown
// writes.
const maxGlobEntries = 20000

// maxLoopItems is the most items of a for loop whose body is read once per
// item (its variable set to each), and maxLoopWalks the most such readings
// in one command (nested loops multiply); a longer loop, or one past
// maxLoopWalks, is read once with the variable unknown.
const (
	maxLoopItems = 64
	maxLoopWalks = 4096
)

// maxShellVars is the most variables ReadShell follows in one command: a
// variable assigned after that many others is unknown when used.
const maxShellVars = 256

// expandCost and fieldCost are the work (maxShellWork) charged for one
// word expanded by the expand package and for each word it makes: about
// their cost in time next to a byte copied, so that the work bound keeps
// a command of expansions inside the hook's budget as it does one of text.
const (
	expandCost = 2048
	fieldCost  = 128
)

// ReadShell reads what the shell command would do to files (the rules
// are in docs/hooks.md#how-the-guard-reads-a-shell-command): the files it
// writes, the git operations that may change the working tree, and the writes
// it cannot know. Words are expanded as bash would with the expand package of
// mvdan.cc/sh: braces, ~ (env.Home), globs against the file system
// (env.ReadDir, relative to the directory the command has reached), parameters
// assigned earlier in the same command, and the one command substitution $(git
// rev-parse
// --show-toplevel) (env.Toplevel). Anything else a word needs makes it
// unknown. A syntax error stops the reading at the statements before it
// (Partial). It reads, never writes, and never runs a command.
//
// The error is non-nil only when the command was not read at all: over
// MaxShellCommand bytes ([ErrShellTooLarge]), nested deeper than
// MaxShellDepth or past the work bound ([ErrShellTooComplex]), or a parser
// failure ([ErrShellUnparsable]); the guard treats such a command as one
// that could write anywhere. ReadShell never panics.
func ReadShell(command string, env ShellEnv) (r ShellReading, err error) {
	defer func() {
		if p := recover(); p != nil {
			if done, ok := p.(errWorkDone); ok {
				r, err = ShellReading{}, fmt.Errorf("%w: %s", ErrShellTooComplex, done.why)
				return
			}
			r, err = ShellReading{}, fmt.Errorf("%w: the parser failed", ErrShellUnparsable)
		}
	}()
	if len(command) > MaxShellCommand {
		return ShellReading{}, fmt.Errorf("%w: %d bytes, over the %d the guard reads", ErrShellTooLarge, len(command), MaxShellCommand)
	}
	if bracketDepth(command) > MaxShellDepth {
		return ShellReading{}, fmt.Errorf("%w: %s", ErrShellTooComplex, tooDeep)
	}
	if env.ReadDir == nil {
		env.ReadDir = readDirOnly
	}
	if env.ReadFile == nil {
		env.ReadFile = readRegularFile
	}
	w := &shellWalker{seen: map[string]bool{}, src: command, x: &reading{env: env, seen: map[string]bool{}, tops: map[string]string{}, funcs: map[string]bool{}}}
	st := dirState{known: true}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	for stmt, perr := range parser.StmtsSeq(strings.NewReader(command)) {
		if perr != nil {
			r.Partial = fmt.Errorf("%w: %v", ErrShellUnparsable, perr)
			break
		}
		w.stmt(stmt, &st, 0)
	}
	r.Targets, r.Git, r.Unknown = w.targets, w.x.git, w.x.unknown
	return r, nil
}

// reading is what ReadShell gathers beside the targets.
type reading struct {
	env        ShellEnv
	git        []GitOp
	unknown    []UnknownWrite
	seen       map[string]bool   // unknown writes already recorded
	tops       map[string]string // Toplevel answers by directory ("" = none)
	dirEntries int               // entries listed for globs (maxGlobEntries)
	funcs      map[string]bool   // functions defined: true when the body has a write it cannot name
	loopWalks  int               // loop bodies read per item (maxLoopWalks)
}

// unknown is the unknown writes gathered so far (none for
// ShellWriteTargets).
func (w *shellWalker) unknown() []UnknownWrite {
	if w.x == nil {
		return nil
	}
	return w.x.unknown
}

// shellVar is one variable assigned in the command, in a list that a
// subshell extends without changing its parent's.
type shellVar struct {
	name  string
	value expand.Variable
	known bool
	hints []string // literal fragments of a value that is not known
	next  *shellVar
	depth int // how many variables follow in the list
}

// push makes v the newest variable of st. A list grown to twice
// maxShellVars is compacted to the newest binding of each name, at most
// maxShellVars of them (older names are then unknown), so that a lookup
// stays short whatever the command.
func (w *shellWalker) push(st *dirState, v *shellVar) {
	v.next = st.vars
	if st.vars != nil {
		v.depth = st.vars.depth + 1
	}
	st.vars = v
	if v.depth < 2*maxShellVars {
		return
	}
	seen := map[string]bool{}
	var keep []*shellVar
	for x := v; x != nil && len(keep) < maxShellVars; x = x.next {
		w.spend(1)
		if !seen[x.name] {
			seen[x.name] = true
			keep = append(keep, x)
		}
	}
	var list *shellVar
	for i := len(keep) - 1; i >= 0; i-- {
		c := *keep[i]
		c.next, c.depth = list, 0
		if list != nil {
			c.depth = list.depth + 1
		}
		list = &c
	}
	st.vars = list
}

// lookup finds the variable name, each step counted as work.
func (w *shellWalker) lookup(vars *shellVar, name string) *shellVar {
	for v := vars; v != nil; v = v.next {
		w.spend(1)
		if v.name == name {
			return v
		}
	}
	return nil
}

// absDir is the absolute directory of st, "" when it is not known.
func (w *shellWalker) absDir(st dirState) string {
	switch {
	case !st.known:
		return ""
	case strings.HasPrefix(st.base, "/"):
		return filepath.Clean(st.base)
	case w.x.env.Cwd == "" || !strings.HasPrefix(w.x.env.Cwd, "/"):
		return ""
	}
	return filepath.Join(w.x.env.Cwd, st.base)
}

// errUnknownValue stops an expansion that needs something not known.
var errUnknownValue = errors.New("a value acc cannot know")

// errGlobBound stops a glob past maxGlobEntries.
var errGlobBound = errors.New("globs list too many files")

// expansion gathers, for one word, what its expansion needed but did not
// know.
type expansion struct {
	unknown bool
	why     string
	hints   []string
}

func (e *expansion) miss(why string, hints ...string) {
	if !e.unknown {
		e.unknown, e.why = true, why
	}
	e.hints = append(e.hints, hints...)
}

// environ is the shell's variables as ReadShell knows them: those
// assigned earlier in the command, HOME and PWD; any other is a miss.
type environ struct {
	w  *shellWalker
	st dirState
	e  *expansion
}

func (v environ) Get(name string) expand.Variable {
	if sv := v.w.lookup(v.st.vars, name); sv != nil {
		if !sv.known {
			v.e.miss("uses $"+name+", whose value acc cannot know", sv.hints...)
		}
		return sv.value
	}
	switch name {
	case "IFS":
		return expand.Variable{} // the default
	case "PWD":
		// Asked by every expansion for the glob base: a miss only if the
		// word itself uses $PWD (expandWord checks).
		if d := v.w.absDir(v.st); d != "" {
			return expand.Variable{Set: true, Kind: expand.String, Str: d}
		}
		return expand.Variable{}
	case "HOME":
		if h := v.w.x.env.Home; h != "" {
			return expand.Variable{Set: true, Kind: expand.String, Str: h}
		}
	}
	if strings.HasPrefix(name, "HOME ") {
		v.e.miss("uses another user's home directory")
	} else {
		v.e.miss("uses $" + name + ", which is set outside this command")
	}
	return expand.Variable{}
}

func (environ) Each(func(string, expand.Variable) bool) {}

// config is the expansion configuration for a word read in st.
func (w *shellWalker) config(st dirState, e *expansion) *expand.Config {
	return &expand.Config{
		Env: environ{w, st, e},
		CmdSubst: func(out io.Writer, cs *syntax.CmdSubst) error {
			if top, ok := w.toplevel(cs, st); ok {
				_, err := io.WriteString(out, top)
				return err
			}
			e.miss("takes its value from a command substitution acc does not run")
			return errUnknownValue
		},
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "/dev/fd/63", nil },
		ReadDir2: func(dir string) ([]fs.DirEntry, error) {
			if !filepath.IsAbs(dir) {
				e.miss("is a pattern in a directory acc cannot know")
				return nil, errUnknownValue
			}
			if w.x.dirEntries > maxGlobEntries {
				e.miss(fmt.Sprintf("is a pattern whose matches pass the %d files acc lists", maxGlobEntries))
				return nil, errGlobBound
			}
			list, err := w.x.env.ReadDir(dir)
			w.x.dirEntries += len(list) + 1
			w.spend(len(list) + 1)
			return list, err
		},
	}
}

// toplevel answers the command substitution cs when it is exactly
// `git rev-parse --show-toplevel`, run in st's directory.
func (w *shellWalker) toplevel(cs *syntax.CmdSubst, st dirState) (string, bool) {
	if w.x.env.Toplevel == nil || len(cs.Stmts) != 1 {
		return "", false
	}
	s := cs.Stmts[0]
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || s.Negated || s.Background || len(call.Assigns) > 0 || len(call.Args) != 3 {
		return "", false
	}
	for i, want := range []string{"git", "rev-parse", "--show-toplevel"} {
		if lit := call.Args[i].Lit(); lit != want {
			return "", false
		}
	}
	dir := w.absDir(st)
	if dir == "" {
		return "", false
	}
	if top, seen := w.x.tops[dir]; seen {
		return top, top != ""
	}
	top, ok := w.x.env.Toplevel(dir)
	if !ok {
		top = ""
	}
	w.x.tops[dir] = top
	return top, top != ""
}

// expandWord expands x as bash would in st: into fields (an argument, a
// for item) or one string (an assignment's value). A word that needs what
// acc cannot know comes back as one unknown word.
func (w *shellWalker) expandWord(x *syntax.Word, st dirState, fields bool) []word {
	if x == nil {
		return nil
	}
	raw := w.word(x)
	if raw.literal && !hasBraces(x) {
		raw.expanded = true
		return []word{raw}
	}
	e := &expansion{}
	if lit, ok := x.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") && !strings.HasPrefix(lit.Value, "~/") && lit.Value != "~" {
		e.miss("uses another user's home directory")
	}
	if !st.known && usesPWD(x) {
		e.miss("uses $PWD after a cd acc cannot follow")
	}
	var out []string
	if !e.unknown {
		w.spend(expandCost)
		cfg := w.config(st, e)
		if fields {
			got, err := expand.Fields(cfg, x)
			if err != nil {
				e.miss("cannot be expanded before the command runs")
			}
			out = got
		} else {
			got, err := expand.Literal(cfg, x)
			if err != nil {
				e.miss("cannot be expanded before the command runs")
			}
			out = []string{got}
		}
	}
	if e.unknown {
		raw.unknown, raw.why = true, e.why
		raw.hints = dedupe(append(w.wordHints(x), e.hints...))
		return []word{raw}
	}
	ws := make([]word, len(out))
	for i, f := range out {
		w.spend(len(f) + fieldCost)
		ws[i] = word{text: f, literal: true, quoted: raw.quoted, expanded: true}
	}
	return ws
}

// expandWords expands a command's words into its arguments.
func (w *shellWalker) expandWords(args []*syntax.Word, st dirState) []word {
	var out []word
	for _, a := range args {
		out = append(out, w.expandWord(a, st, true)...)
	}
	return out
}

func usesPWD(x *syntax.Word) bool {
	found := false
	syntax.Walk(x, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && (pe.Param.Value == "PWD" || pe.Param.Value == "OLDPWD") {
			found = true
		}
		return !found
	})
	return found
}

// assign records NAME=value assignments in st: known when the value
// expands, else unknown with the value's literal fragments as hints.
func (w *shellWalker) assign(list []*syntax.Assign, st *dirState) {
	for _, a := range list {
		if a == nil || a.Name == nil || a.Naked {
			continue
		}
		v := &shellVar{name: a.Name.Value, known: true}
		switch {
		case a.Index != nil || a.Append:
			v.known = false // an element or an append: not followed
			v.hints = w.wordHints(a.Value)
		case a.Array != nil:
			v.value = expand.Variable{Set: true, Kind: expand.Indexed}
			for _, el := range a.Array.Elems {
				if el.Index != nil {
					v.known = false
				}
				for _, f := range w.expandWord(el.Value, *st, true) {
					if f.unknown {
						v.known = false
						v.hints = append(v.hints, f.hints...)
						continue
					}
					v.value.List = append(v.value.List, f.text)
				}
			}
		default:
			f := w.expandWord(a.Value, *st, false)
			if len(f) == 1 && !f[0].unknown {
				v.value = expand.Variable{Set: true, Kind: expand.String, Str: f[0].text}
			} else if len(f) == 0 {
				v.value = expand.Variable{Set: true, Kind: expand.String}
			} else {
				v.known, v.hints = false, f[0].hints
			}
		}
		w.push(st, v)
	}
}

// builtinAssign records the variables the builtins set, other than by
// NAME=value (docs/hooks.md#expansions): set's operands become the
// positional parameters; read, mapfile/readarray, getopts and printf -v
// assign values acc does not work out, so their variables are unknown,
// hinted by what they take them from (the input's heredoc, here-string,
// < file or pipe; printf's and getopts' arguments). It reports whether
// name was such a builtin.
func (w *shellWalker) builtinAssign(name string, args []word, redirs []*syntax.Redirect, st *dirState) bool {
	unknownVars := func(names []string, hints []string) {
		for _, n := range names {
			w.push(st, &shellVar{name: n, hints: dedupe(hints)})
		}
	}
	fromInput := func() []string {
		return append(slices.Clip(w.pipeHints), w.inputHints(redirs, *st)...)
	}
	switch name {
	case "set":
		for i := 0; i < len(args); i++ {
			t := args[i].text
			if t == "--" || !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") {
				if t == "--" {
					i++
				}
				w.positional(args[i:], st)
				return true
			}
			if (t == "-o" || t == "+o") && i+1 < len(args) {
				i++
			}
		}
		return true
	case "read":
		p := parseArgs(args, "adinNptu", nil)
		names := texts(p.ops)
		if a := p.value("a", ""); a != nil {
			names = append(names, *a)
		}
		if len(names) == 0 {
			names = []string{"REPLY"}
		}
		unknownVars(names, fromInput())
	case "mapfile", "readarray":
		p := parseArgs(args, "dnOsuCc", nil)
		names := []string{"MAPFILE"}
		if len(p.ops) > 0 {
			names = texts(p.ops[len(p.ops)-1:])
		}
		unknownVars(names, fromInput())
	case "getopts":
		if len(args) < 2 {
			return true
		}
		var hints []string
		for _, a := range args[2:] {
			hints = append(hints, a.hints...)
			hints = append(hints, codeTokens(a.text)...)
		}
		unknownVars([]string{args[1].text, "OPTARG"}, hints)
	case "printf":
		p := parseArgs(args, "v", nil)
		v := p.value("v", "")
		if v == nil {
			return false // prints: its redirections are judged as usual
		}
		var hints []string
		for _, a := range p.ops {
			hints = append(hints, a.hints...)
			hints = append(hints, codeTokens(a.text)...)
		}
		unknownVars([]string{strings.TrimSuffix(strings.SplitN(*v, "[", 2)[0], "]")}, hints)
	default:
		return false
	}
	return true
}

// positional makes args the positional parameters of st ($1…, $#, $@).
func (w *shellWalker) positional(args []word, st *dirState) {
	known := true
	var hints, list []string
	for _, a := range args {
		if a.unknown {
			known = false
			hints = append(hints, a.hints...)
			continue
		}
		list = append(list, a.text)
	}
	if !known {
		// Which operand lands in which parameter is not known.
		for _, n := range []string{"@", "*", "#", "1", "2", "3", "4", "5", "6", "7", "8", "9"} {
			w.push(st, &shellVar{name: n, hints: dedupe(append(hints, list...))})
		}
		return
	}
	for i := 1; i <= 9; i++ {
		v := expand.Variable{}
		if i <= len(list) {
			v = expand.Variable{Set: true, Kind: expand.String, Str: list[i-1]}
		}
		w.push(st, &shellVar{name: strconv.Itoa(i), value: v, known: true})
	}
	all := expand.Variable{Set: true, Kind: expand.Indexed, List: list}
	w.push(st, &shellVar{name: "@", value: all, known: true})
	w.push(st, &shellVar{name: "*", value: all, known: true})
	w.push(st, &shellVar{name: "#", value: expand.Variable{Set: true, Kind: expand.String, Str: strconv.Itoa(len(list))}, known: true})
}

// inputHints are the path-like tokens of the input redirections in
// redirs: a heredoc, a here-string, or a < file acc can read.
func (w *shellWalker) inputHints(redirs []*syntax.Redirect, st dirState) []string {
	var hints []string
	for _, r := range redirs {
		switch {
		case r.Hdoc != nil:
			hints = append(hints, codeTokens(w.word(r.Hdoc).text)...)
		case r.Op == syntax.WordHdoc && r.Word != nil:
			hints = append(hints, codeTokens(w.word(r.Word).text)...)
		case r.Op == syntax.RdrIn && r.Word != nil:
			src := w.word(r.Word)
			if !src.literal {
				hints = append(hints, codeTokens(src.text)...)
				continue
			}
			if text, err := w.readFile(src.text, st); err == nil {
				hints = append(hints, codeTokens(text)...)
			}
		}
	}
	return hints
}

// declare records the assignments of export, local, declare, readonly
// and typeset; with an option that changes what a value means (-n a
// reference, -i arithmetic, -l/-u/-c case, -a/-A arrays) the variables
// are unknown.
func (w *shellWalker) declare(c *syntax.DeclClause, st *dirState) {
	for _, a := range c.Args {
		if a == nil || !a.Naked || a.Value == nil {
			continue
		}
		if flag := w.word(a.Value).text; strings.HasPrefix(flag, "-") && strings.ContainsAny(flag, "niluacA") || c.Variant.Value == "nameref" {
			for _, b := range c.Args {
				if b != nil && b.Name != nil {
					w.push(st, &shellVar{name: b.Name.Value, hints: w.wordHints(b.Value)})
				}
			}
			return
		}
	}
	w.assign(c.Args, st)
}

// forLoop reads a for loop's body once per item, its variable set to each,
// when the items are known and few; else once with the variable unknown.
func (w *shellWalker) forLoop(c *syntax.ForClause, st *dirState, depth int) {
	it, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		w.stmts(c.Do, st, depth) // for ((…)): arithmetic only
		return
	}
	var items []word
	known := it.InPos.IsValid() // without "in" it loops over "$@"
	if known {
		items = w.expandWords(it.Items, *st)
		for _, f := range items {
			known = known && !f.unknown
		}
	}
	if known && len(items) <= maxLoopItems && w.x.loopWalks+len(items) <= maxLoopWalks {
		w.x.loopWalks += len(items)
		for _, f := range items {
			w.push(st, &shellVar{name: it.Name.Value, known: true,
				value: expand.Variable{Set: true, Kind: expand.String, Str: f.text}})
			w.stmts(c.Do, st, depth)
		}
		return
	}
	v := &shellVar{name: it.Name.Value}
	for _, f := range items {
		if f.unknown {
			v.hints = append(v.hints, f.hints...)
		} else {
			v.hints = append(v.hints, f.text)
		}
	}
	w.push(st, v)
	w.stmts(c.Do, st, depth)
}

// unknownWrite records a write whose target is not known.
func (w *shellWalker) unknownWrite(why string, st dirState, hints []string) {
	u := UnknownWrite{Why: why, Dir: st.base, DirKnown: st.known, Hints: dedupe(hints)}
	if !st.known {
		u.Dir = ""
	}
	key := u.Why + "\x00" + u.Dir + "\x00" + strings.Join(u.Hints, "\x00")
	w.spend(len(key))
	if w.x.seen[key] {
		return
	}
	w.x.seen[key] = true
	w.x.unknown = append(w.x.unknown, u)
}

// unknownProgram records a command whose name is not known before it runs:
// it may write its operands.
func (w *shellWalker) unknownProgram(ws []word, st dirState) {
	w.unknownCode("a command whose name acc cannot know before it runs", ws, st)
}

// unknownCode records an unknown write whose hints are the literal
// fragments of ws.
func (w *shellWalker) unknownCode(why string, ws []word, st dirState) {
	var hints []string
	for _, a := range ws {
		if a.unknown {
			hints = append(hints, a.hints...)
		} else {
			hints = append(hints, codeTokens(a.text)...)
		}
	}
	w.unknownWrite(why, st, hints)
}

// wordHints are the literal fragments of the word x: its literal text with
// each expansion cut out, and the path-like tokens of the text inside
// substitutions and parameter defaults.
func (w *shellWalker) wordHints(x *syntax.Word) []string {
	if x == nil {
		return nil
	}
	var b strings.Builder
	anyPath := false
	var walk func(parts []syntax.WordPart)
	walk = func(parts []syntax.WordPart) {
		for _, part := range parts {
			switch p := part.(type) {
			case *syntax.Lit:
				b.WriteString(unescape(p.Value, false))
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				walk(p.Parts)
			case *syntax.ParamExp:
				b.WriteByte(0)
				if p.Exp != nil && p.Exp.Word != nil {
					walk(p.Exp.Word.Parts)
					b.WriteByte(0)
				}
			default:
				text := source(w.src, part)
				b.WriteByte(0)
				b.WriteString(text)
				anyPath = anyPath || lists(text) // its output may name any path
				b.WriteByte(0)
			}
		}
	}
	walk(x.Parts)
	w.spend(b.Len())
	hints := codeTokens(b.String())
	if anyPath {
		hints = append(hints, "*")
	}
	return hints
}

// hintsOf are the path-like tokens of a statement's text (a pipeline
// stage before xargs).
func (w *shellWalker) hintsOf(s *syntax.Stmt) []string {
	if s == nil {
		return nil
	}
	text := source(w.src, s)
	w.spend(len(text))
	hints := codeTokens(text)
	if lists(text) {
		hints = append(hints, "*") // its output may name any path
	}
	return hints
}

// listers are programs whose output is a list of paths found in a
// directory (`git ls-files | xargs …`, `for f in $(find .)`): the hint of
// their output is "*", which reaches every path.
var listers = []string{"find", "fd", "fdfind", "ls", "git", "rg", "grep", "ag", "locate", "tree", "du"}

// lists reports whether the shell text runs one of the listers.
func lists(text string) bool {
	for _, tok := range codeTokens(text) {
		if contains(listers, path.Base(tok)) {
			return true
		}
	}
	return false
}

// codeTokens splits text into the tokens that could name a path: runs
// between blanks, quotes, brackets of code, and the separators , ; = $ | &
// < > that holding at least one letter or digit and not starting with '-'.
func codeTokens(text string) []string {
	var out []string
	for tok := range strings.FieldsFuncSeq(text, func(r rune) bool {
		return r <= ' ' || strings.ContainsRune("'\"`(){},;=$|&<>\\", r)
	}) {
		if strings.HasPrefix(tok, "-") || !strings.ContainsFunc(tok, func(r rune) bool {
			return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80
		}) {
			continue
		}
		out = append(out, tok)
	}
	return dedupe(out)
}

func dedupe(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(list))
	out := list[:0:0]
	for _, s := range list {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// HintReaches reports whether the hint (UnknownWrite.Hints) could name the
// path p (slash-separated, relative to the workspace root, such as a
// claim's file): the hint, or a tail of it after a '/', less a leading
// "./" or "/", equals p, names a directory above p, or ends p after a '/';
// or the hint (or such a tail), read as a glob pattern, matches p or a
// tail of p after a '/'. It is deliberately generous: a hint that reaches
// a guarded claim makes an unknown write a deny (docs/hooks.md).
func HintReaches(hint, p string) bool {
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return false
	}
	h := hint
	for {
		t := strings.TrimLeft(strings.TrimPrefix(h, "./"), "/")
		if t != "" && t != "." && t != ".." {
			t = path.Clean(t)
			if p == t || strings.HasPrefix(p, t+"/") || strings.HasSuffix(p, "/"+t) || globReaches(t, p) {
				return true
			}
		}
		_, rest, ok := strings.Cut(h, "/")
		if !ok {
			return false
		}
		h = rest
	}
}

// globReaches reports whether pattern t matches p or a tail of p.
func globReaches(t, p string) bool {
	if !strings.ContainsAny(t, "*?[") {
		return false
	}
	for {
		if ok, err := path.Match(t, p); err == nil && ok {
			return true
		}
		// A pattern may name a directory above p.
		if ok, err := path.Match(t+"/*", p); err == nil && ok {
			return true
		}
		_, rest, found := strings.Cut(p, "/")
		if !found {
			return false
		}
		p = rest
	}
}

// gitOp records a git invocation (args: subcommand first) that may change
// the working tree or sweep it into a commit.
func (w *shellWalker) gitOp(args []word, st dirState) {
	if len(args) == 0 || !touchesWorktree(args[0].text, args[1:]) {
		return
	}
	for _, a := range args {
		if a.unknown || !st.known {
			why := "git " + args[0].text + " has an argument acc cannot know before it runs"
			if !st.known {
				why = "git " + args[0].text + " runs in a directory acc cannot know"
			}
			w.unknownCode(why, args[1:], st)
			return
		}
	}
	op := GitOp{Dir: st.base, Args: texts(args)}
	w.spend(len(op.Args))
	w.x.git = append(w.x.git, op)
}

// touchesWorktree reports whether git sub with args may change the
// working tree or sweep it into a commit (docs/hooks.md).
func touchesWorktree(sub string, args []word) bool {
	has := func(flags ...string) bool {
		for _, a := range args {
			if a.text == "--" {
				return false
			}
			if contains(flags, a.text) {
				return true
			}
		}
		return false
	}
	switch sub {
	case "stash":
		if len(args) == 0 || strings.HasPrefix(args[0].text, "-") {
			return true // bare stash, or push's options
		}
		switch args[0].text {
		case "push", "save", "pop", "apply", "branch":
			return true
		}
		return false
	case "reset":
		return has("--hard", "--merge", "--keep")
	case "checkout", "switch", "restore", "am", "merge", "rebase", "pull", "cherry-pick", "revert":
		return true
	case "clean":
		return !has("-n", "--dry-run")
	case "apply":
		return !has("--check", "--stat", "--numstat", "--summary") || has("--apply")
	case "commit":
		p := parseArgs(args, "mCcFt", []string{"message", "file", "reuse-message", "reedit-message", "template", "author", "date", "fixup", "squash", "cleanup", "trailer", "pathspec-from-file"})
		return p.has("a", "all") || p.has("p", "patch") || p.has("", "interactive") || len(p.ops) > 0 || p.value("", "pathspec-from-file") != nil
	case "add":
		p := parseArgs(args, "", []string{"chmod", "pathspec-from-file"})
		if p.has("n", "dry-run") {
			return false
		}
		return p.has("A", "all") || p.has("u", "update") || p.has("p", "patch") || p.has("i", "interactive") ||
			len(p.ops) > 0 || p.value("", "pathspec-from-file") != nil
	case "sparse-checkout":
		return len(args) == 0 || args[0].text != "list"
	case "bisect":
		return len(args) == 0 || !contains([]string{"log", "visualize", "view", "terms", "help"}, args[0].text)
	case "worktree":
		return len(args) > 0 && (args[0].text == "remove" || args[0].text == "move")
	case "checkout-index", "read-tree", "merge-file", "mergetool", "filter-branch", "lfs", "archive", "bundle":
		return true
	}
	// Any other name that is not one of git's own commands may be an
	// alias for one that writes: GitTouched follows it.
	return !gitOwnCommands[sub]
}

// gitOwnCommands are git's commands that change no working-tree file, or
// whose writes the common table reads (rm, mv) or that are judged above;
// a subcommand not listed here nor above may be an alias.
var gitOwnCommands = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "branch": true, "tag": true,
	"fetch": true, "push": true, "remote": true, "config": true, "blame": true, "annotate": true,
	"grep": true, "ls-files": true, "ls-tree": true, "ls-remote": true, "rev-parse": true,
	"rev-list": true, "describe": true, "shortlog": true, "reflog": true, "cat-file": true,
	"show-ref": true, "for-each-ref": true, "symbolic-ref": true, "update-ref": true, "help": true,
	"version": true, "var": true, "count-objects": true, "fsck": true, "gc": true, "prune": true,
	"repack": true, "pack-refs": true, "verify-commit": true, "verify-tag": true, "verify-pack": true,
	"whatchanged": true, "range-diff": true, "format-patch": true, "request-pull": true,
	"name-rev": true, "merge-base": true, "cherry": true, "notes": true, "check-ignore": true,
	"check-attr": true, "check-ref-format": true, "check-mailmap": true, "diff-tree": true,
	"diff-index": true, "diff-files": true, "show-branch": true, "init": true, "clone": true,
	"send-email": true, "credential": true, "hash-object": true, "write-tree": true,
	"commit-tree": true, "mktag": true, "mktree": true, "maintenance": true, "replace": true,
	"rerere": true, "stripspace": true, "interpret-trailers": true, "column": true,
	"fast-export": true, "submodule": true, "difftool": true, "mailinfo": true,
	"get-tar-commit-id": true, "patch-id": true, "unpack-objects": true, "index-pack": true,
	"pack-objects": true, "prune-packed": true, "multi-pack-index": true, "commit-graph": true,
	"update-index": true, "rm": true, "mv": true,
	"stash": true, "reset": true, "clean": true, "apply": true, "commit": true, "add": true,
}

// errUnreadable: the file a command takes its writes from is not read.
var errUnreadable = errors.New("unreadable")

// readDirOnly is os.ReadDir that opens nothing but a directory: a glob
// that passes a FIFO must not wait for a writer.
func readDirOnly(name string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, err := f.ReadDir(-1)
	slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return list, err
}

// readRegularFile reads up to MaxShellReadFile+1 bytes of the regular
// file name.
func readRegularFile(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errUnreadable
	}
	return io.ReadAll(io.LimitReader(f, MaxShellReadFile+1))
}

// readFile reads the file name (relative to st) for a command, bounded by
// MaxShellReadFile.
func (w *shellWalker) readFile(name string, st dirState) (string, error) {
	if !strings.HasPrefix(name, "/") {
		d := w.absDir(st)
		if d == "" {
			return "", errUnreadable
		}
		name = filepath.Join(d, name)
	}
	b, err := w.x.env.ReadFile(name)
	if err != nil || len(b) > MaxShellReadFile {
		return "", errUnreadable
	}
	w.spend(len(b))
	return string(b), nil
}

// scratch runs judge on a throw-away copy of what the walker gathered and
// returns what it added: the targets, git operations and unknown writes
// of a command run by another (find -exec, xargs).
func (w *shellWalker) scratch(judge func()) (targets []string, writes bool, hints []string) {
	nt, ng, nu := len(w.targets), len(w.x.git), len(w.x.unknown)
	prog := w.prog
	judge()
	w.prog = prog
	targets = slices.Clone(w.targets[nt:])
	for _, t := range targets {
		delete(w.seen, t)
	}
	for _, u := range w.x.unknown[nu:] {
		hints = append(hints, u.Hints...)
		delete(w.x.seen, u.Why+"\x00"+u.Dir+"\x00"+strings.Join(u.Hints, "\x00"))
	}
	for _, g := range w.x.git[ng:] {
		hints = append(hints, g.Args[1:]...)
	}
	writes = len(w.targets) > nt || len(w.x.git) > ng || len(w.x.unknown) > nu
	w.targets, w.x.git, w.x.unknown = w.targets[:nt], w.x.git[:ng], w.x.unknown[:nu]
	return targets, writes, hints
}

// hasBraces reports whether x holds unquoted text with a brace, which
// brace expansion may split into several words.
func hasBraces(x *syntax.Word) bool {
	for _, p := range x.Parts {
		if lit, ok := p.(*syntax.Lit); ok && strings.Contains(lit.Value, "{") {
			return true
		}
	}
	return false
}
