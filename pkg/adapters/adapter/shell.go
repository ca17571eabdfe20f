package adapter

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ErrShellUnparsable is wrapped by ShellWriteTargets when the command is
// not valid shell: the guard lets such a command through and reports it
// (docs/decisions.md#7-shell-writes: never block at random).
var ErrShellUnparsable = errors.New("shell command does not parse")

// ErrShellUnknownDir is wrapped by ShellWriteTargets when a cd (or git -C,
// env -C) with an argument that is not a literal path comes before a
// relative write target: where that target lands cannot be known without
// running the command, so it is left out rather than guessed. The targets
// returned with this error are the ones that are still certain (absolute
// ones, and those before the cd); the guard should check them and report
// the error.
var ErrShellUnknownDir = errors.New("a cd to a directory that is not a literal path hides where later relative targets are")

// MaxShellCommand is the longest command, in bytes, ShellWriteTargets
// reads (docs/hooks.md#commands-too-large-to-read). Together with
// MaxShellDepth and maxShellWork it bounds the reading: parsing is linear
// in the text once the nesting is bounded, and the walk stops once its work
// passes maxShellWork, so a command up to this size is read well inside the
// hook's 5-second budget on a loaded machine.
const MaxShellCommand = 1 << 20

// MaxShellDepth is the deepest nesting ShellWriteTargets reads: brackets
// ( { $( ${ counted in the raw text before parsing (the parser's cost per
// level is far above its cost per byte), and statements inside statements
// while walking. A command nested deeper is not read: it wraps
// [ErrShellTooComplex].
const MaxShellDepth = 1000

// maxShellWork bounds the walk, in units of one statement visited or one
// byte of text copied or parsed again (a word's text, a script handed to
// sh -c or eval): 32 per byte of the largest command read. An ordinary
// command costs a few units per byte; a walk over this is stopped and
// wraps [ErrShellTooComplex]. A counter, not a clock, so the answer does
// not depend on how loaded the machine is.
const maxShellWork = 32 * MaxShellCommand

// ErrShellTooLarge is wrapped by ShellWriteTargets when the command is
// longer than MaxShellCommand: it is not parsed, so where it writes is
// unknown.
var ErrShellTooLarge = errors.New("shell command too large to read")

// ErrShellTooComplex is wrapped by ShellWriteTargets when the command nests
// deeper than MaxShellDepth or its walk would take more than maxShellWork:
// it is not read to the end, so where it writes is unknown. The error's
// text after "shell command too complex to read: " says which bound it
// passed, in numbers only (never the command's text).
var ErrShellTooComplex = errors.New("shell command too complex to read")

// errWorkDone stops the walk (a panic caught by ShellWriteTargets) once
// it passed a bound; why says which.
type errWorkDone struct{ why string }

// maxShellNesting bounds how deep scripts handed to sh -c or eval are read.
const maxShellNesting = 4

// ShellWriteTargets returns the paths a shell command line would write
// (docs/decisions.md#7-shell-writes, docs/hooks.md#how-the-guard-reads-a-shell-command),
// without duplicates, in the
// order they appear. The command is parsed with a real shell parser (bash
// dialect) and every simple command is examined: in lists, pipelines,
// subshells, blocks, conditionals, loops, functions, command and process
// substitutions, and scripts given literally to sh -c or eval.
//
// A write target is the file of an output redirection (>, >>, >|, &>, &>>,
// N>, <>, >&file) or an operand of a command whose job is writing: tee,
// touch, truncate, rm, rmdir, unlink, shred, mkdir, mv (every operand), cp,
// install, ln and rsync (the destination), dd of=, sed/perl/ruby with an
// in-place flag, git restore / rm / mv, git checkout -- paths, curl -o,
// wget -O, sort -o, and apply_patch (the patch's header paths). Wrappers
// (sudo, doas, command, builtin, exec, nohup, time, nice, env, timeout,
// stdbuf, ionice) and leading NAME=value assignments are looked through.
// Reads, input redirections, descriptor duplications (2>&1), the discard
// devices (/dev/null, /dev/stdout, /dev/stderr, /dev/tty, /dev/fd/N), text
// in quotes, heredoc bodies and unknown commands never give a target.
//
// Targets are returned as written, relative to the session's cwd or
// absolute; nothing is expanded, so a target holding a variable, a glob or
// a ~ is returned literally. A cd (or pushd) with a literal argument moves
// the base for the targets after it within the same shell: "cd src && rm
// a.go" writes "src/a.go", "cd /abs && rm a" writes "/abs/a", a cd inside a
// subshell or pipeline stage stays there. The base is applied by prefixing,
// never by cleaning the target, so "cd sub && echo x > ../f" gives
// "sub/../f": the canonical path function resolves sub (perhaps a symlink)
// before it applies "..", as the kernel would. Commands are assumed to
// succeed: a cd that fails at run time is not foreseen.
//
// Unparsable input returns no targets and an error wrapping
// [ErrShellUnparsable]; a command over [MaxShellCommand] bytes returns no
// targets and an error wrapping [ErrShellTooLarge]; one nested deeper than
// [MaxShellDepth], or whose walk passes its work bound, returns no targets
// and an error wrapping [ErrShellTooComplex]; a relative target after a
// non-literal cd is left out and reported with [ErrShellUnknownDir].
// ShellWriteTargets never panics. [ReadShell] reads the same command as
// bash will run it: expanded, with git operations and the writes it cannot
// know.
func ShellWriteTargets(command string) (targets []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			if done, ok := r.(errWorkDone); ok {
				targets, err = nil, fmt.Errorf("%w: %s", ErrShellTooComplex, done.why)
				return
			}
			targets, err = nil, fmt.Errorf("%w: the parser failed", ErrShellUnparsable)
		}
	}()
	if len(command) > MaxShellCommand {
		return nil, fmt.Errorf("%w: %d bytes, over the %d the guard reads", ErrShellTooLarge, len(command), MaxShellCommand)
	}
	w, err := readShell(command)
	if err != nil {
		return nil, err
	}
	if w.hidden {
		return w.targets, ErrShellUnknownDir
	}
	return w.targets, nil
}

// tooDeep is why a command nested past MaxShellDepth is not read.
var tooDeep = fmt.Sprintf("it nests more than %d levels deep", MaxShellDepth)

// bracketDepth is the deepest nesting of ( and { against ) and } in s, read
// as raw bytes (quotes are not looked at, so text in quotes counts too: an
// over-estimate, which only ever refuses to read, never misreads).
func bracketDepth(s string) int {
	depth, most := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{':
			depth++
			most = max(most, depth)
		case ')', '}':
			depth = max(depth-1, 0)
		}
	}
	return most
}

// readShell parses command and walks it; the walker holds the targets and
// the work it took. It panics with errWorkDone past a bound.
func readShell(command string) (*shellWalker, error) {
	if bracketDepth(command) > MaxShellDepth {
		return nil, fmt.Errorf("%w: %s", ErrShellTooComplex, tooDeep)
	}
	w := &shellWalker{seen: map[string]bool{}, src: command}
	st := dirState{known: true}
	file, err := parseShell(command)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrShellUnparsable, err)
	}
	w.stmts(file.Stmts, &st, 0)
	return w, nil
}

func parseShell(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// dirState is where relative paths land: base is the directory relative
// to the session's cwd ("" for the cwd itself, or absolute); known is false
// after a cd whose argument could not be read.
type dirState struct {
	base  string
	known bool
	vars  *shellVar // variables assigned so far (ReadShell only)
}

// chdir moves the base to dir (a literal argument). The shell's cd is
// logical (cd .. returns to where it came from even through a symlink), so
// its base is cleaned lexically; a program's chdir (git -C, env -C) is
// physical, so its path is kept as written for the canonical path function
// to resolve.
func (s *dirState) chdir(dir string, logical bool) {
	switch {
	case strings.HasPrefix(dir, "/"):
		s.base, s.known = dir, true
	case !s.known:
		return
	case s.base == "":
		s.base = dir
	default:
		s.base = strings.TrimSuffix(s.base, "/") + "/" + dir
	}
	if logical {
		s.base = path.Clean(s.base)
	}
	if s.base == "." {
		s.base = ""
	}
}

type shellWalker struct {
	targets []string
	seen    map[string]bool
	hidden  bool   // a relative target was left out after an unknown cd
	src     string // the text being walked, which the syntax nodes' offsets index
	level   int    // statements around the one being read
	work    int    // units of work done (maxShellWork)

	// ReadShell only: x holds what is read beyond the targets (nil for
	// ShellWriteTargets, which reads words as written); prog names the
	// program being judged, for the reasons of unknown writes; pipeHints
	// are the literal words of the pipeline stages before the one read.
	x         *reading
	prog      string
	pipeHints []string
}

// spend counts n units of work and stops the walk past maxShellWork.
func (w *shellWalker) spend(n int) {
	w.work += n
	if w.work > maxShellWork {
		panic(errWorkDone{fmt.Sprintf("reading it takes more than %d steps", maxShellWork)})
	}
}

// word is wordIn for the text being walked, its copying counted as work.
func (w *shellWalker) word(x *syntax.Word) word {
	out, copied := wordIn(w.src, x)
	w.spend(copied)
	return out
}

func (w *shellWalker) words(args []*syntax.Word) []word {
	out := make([]word, len(args))
	for i, a := range args {
		out[i] = w.word(a)
	}
	return out
}

// add records target as written in the directory state st.
func (w *shellWalker) add(target string, st dirState) {
	if target == "" || discardSink(target) {
		return
	}
	if w.x != nil && strings.ContainsAny(target, "*?[") {
		// A pattern left as written (it matched nothing when read, or
		// was quoted) may name a file that exists by the time it runs.
		w.unknownWrite(w.prog+" names a pattern that matches no file now", st, []string{target})
	}
	if !strings.HasPrefix(target, "/") && (w.x != nil || !strings.HasPrefix(target, "~") && !strings.HasPrefix(target, "$")) {
		if !st.known {
			w.hidden = true
			if w.x != nil {
				w.unknownWrite(w.prog+" writes a relative path after a cd acc cannot follow", st, []string{target})
			}
			return
		}
		if st.base != "" && target == "." {
			target = st.base // a directory target: the directory reached
		} else if st.base != "" {
			target = strings.TrimSuffix(st.base, "/") + "/" + target
			if discardSink(target) {
				return
			}
		}
	}
	if !w.seen[target] {
		w.seen[target] = true
		w.targets = append(w.targets, target)
	}
}

func discardSink(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/stdin":
		return true
	}
	if rest, ok := strings.CutPrefix(p, "/dev/fd/"); ok {
		return rest != "" && strings.Trim(rest, "0123456789") == ""
	}
	return false
}

func (w *shellWalker) stmts(list []*syntax.Stmt, st *dirState, depth int) {
	for _, s := range list {
		w.stmt(s, st, depth)
	}
}

func (w *shellWalker) stmt(s *syntax.Stmt, st *dirState, depth int) {
	if s == nil {
		return
	}
	w.spend(1)
	if w.level > MaxShellDepth {
		panic(errWorkDone{tooDeep})
	}
	w.level++
	defer func() { w.level-- }()
	if s.Background || s.Coprocess || s.Disown {
		// A background job runs in a subshell: its cd stays there.
		sub := *st
		st = &sub
	}
	// Redirections are opened before the command runs, in the directory
	// that holds before any cd the command itself makes.
	for _, r := range s.Redirs {
		w.redirect(r, *st, depth)
	}
	if _, call := s.Cmd.(*syntax.CallExpr); !call && w.x != nil {
		// A compound command's input (`while read f; … done <<< list`)
		// reaches the commands inside it as a pipe's would.
		if hints := w.inputHints(s.Redirs, *st); len(hints) > 0 {
			outer := w.pipeHints
			w.pipeHints = append(slices.Clip(outer), hints...)
			defer func() { w.pipeHints = outer }()
		}
	}
	w.command(s.Cmd, s.Redirs, st, depth)
}

func (w *shellWalker) command(cmd syntax.Command, redirs []*syntax.Redirect, st *dirState, depth int) {
	switch c := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		for _, a := range c.Assigns {
			w.substitutions(a, *st, depth)
		}
		for _, a := range c.Args {
			w.substitutions(a, *st, depth)
		}
		if len(c.Args) == 0 && w.x != nil {
			// NAME=value alone sets a shell variable; before a command it
			// only sets that command's environment.
			w.assign(c.Assigns, st)
		}
		w.call(c.Args, redirs, st, depth)
	case *syntax.Block:
		w.stmts(c.Stmts, st, depth)
	case *syntax.Subshell:
		sub := *st
		w.stmts(c.Stmts, &sub, depth)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			// Each stage of a pipeline runs in its own subshell.
			x, y := *st, *st
			w.stmt(c.X, &x, depth)
			outer := w.pipeHints
			if w.x != nil {
				w.pipeHints = append(slices.Clip(outer), w.hintsOf(c.X)...)
			}
			w.stmt(c.Y, &y, depth)
			w.pipeHints = outer
			return
		}
		w.stmt(c.X, st, depth)
		w.stmt(c.Y, st, depth)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			w.stmts(c.Cond, st, depth)
			w.stmts(c.Then, st, depth)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond, st, depth)
		w.stmts(c.Do, st, depth)
	case *syntax.ForClause:
		w.substitutions(c.Loop, *st, depth)
		if w.x != nil {
			w.forLoop(c, st, depth)
			return
		}
		w.stmts(c.Do, st, depth)
	case *syntax.CaseClause:
		w.substitutions(c.Word, *st, depth)
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				w.substitutions(p, *st, depth)
			}
			w.stmts(item.Stmts, st, depth)
		}
	case *syntax.FuncDecl:
		// A function body runs when called, in the caller's directory; it
		// is examined in the directory of its definition.
		sub := *st
		if w.x == nil || c.Name == nil {
			w.stmt(c.Body, &sub, depth)
			return
		}
		// A write the body cannot name may be one of the arguments the
		// function is called with: remembered for the calls.
		n := len(w.x.unknown)
		w.stmt(c.Body, &sub, depth)
		w.x.funcs[c.Name.Value] = len(w.x.unknown) > n
	case *syntax.TimeClause:
		w.stmt(c.Stmt, st, depth)
	case *syntax.CoprocClause:
		sub := *st
		w.stmt(c.Stmt, &sub, depth)
	case *syntax.TestDecl:
		sub := *st
		w.stmt(c.Body, &sub, depth)
	case *syntax.DeclClause:
		w.substitutions(c, *st, depth)
		if w.x != nil {
			w.declare(c, st)
		}
	default:
		// Arithmetic, tests, declarations and let write no file themselves;
		// a command substitution inside them still runs.
		w.substitutions(c, *st, depth)
	}
}

// substitutions examines the commands of every command or process
// substitution inside node; each runs in a subshell of st.
func (w *shellWalker) substitutions(node syntax.Node, st dirState, depth int) {
	if node == nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			sub := st
			w.stmts(x.Stmts, &sub, depth)
			return false
		case *syntax.ProcSubst:
			sub := st
			w.stmts(x.Stmts, &sub, depth)
			return false
		}
		return true
	})
}

func (w *shellWalker) redirect(r *syntax.Redirect, st dirState, depth int) {
	w.substitutions(r, st, depth)
	if r.Word == nil {
		return
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob,
		syntax.RdrInOut:
		if w.x != nil {
			w.prog = "a redirection"
			w.addAll(w.expandWord(r.Word, st, true), st)
			return
		}
		w.add(w.word(r.Word).text, st)
	case syntax.DplOut:
		// ">&word" without a descriptor number before it sends stdout and
		// stderr to the file word unless word is a descriptor ("2", "1-")
		// or "-" (close).
		if w.x != nil {
			if lit := w.word(r.Word); r.N == nil && !(lit.literal && isDescriptor(lit.text)) {
				w.prog = "a redirection"
				w.addAll(w.expandWord(r.Word, st, true), st)
			}
			return
		}
		t := w.word(r.Word).text
		if r.N == nil && !isDescriptor(t) {
			w.add(t, st)
		}
	}
}

func isDescriptor(t string) bool {
	t = strings.TrimSuffix(t, "-")
	return t == "" || strings.Trim(t, "0123456789") == ""
}

// word is one shell word as the command would receive it, unexpanded.
type word struct {
	text    string // quotes removed, escapes resolved, expansions as written
	literal bool   // no expansion of any kind (parameter, command, glob, ~)
	quoted  bool   // some part was quoted

	// ReadShell only: expanded is a field after expansion (text is then
	// what the command receives, literal is true); unknown a word that
	// could not be expanded before the command runs, why says what hid
	// it and hints are its literal fragments (UnknownWrite.Hints).
	expanded bool
	unknown  bool
	why      string
	hints    []string
}

// wordIn reads the word w of the shell text src (whose offsets w's nodes
// carry) and returns it with the number of bytes it copied. A word of one
// expansion is a slice of src, nothing copied, so a word holding a deep
// tree of substitutions costs the same at every level it is read from.
func wordIn(src string, w *syntax.Word) (word, int) {
	out := word{literal: true}
	if w == nil {
		return out, 0
	}
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted, *syntax.ProcSubst:
		default:
			out.literal = false
			out.text = source(src, p)
			return out, 0
		}
	}
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescape(p.Value, false)
			if strings.ContainsAny(p.Value, "*?[") || (i == 0 && strings.HasPrefix(p.Value, "~")) {
				out.literal = false
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			out.quoted = true
			if p.Dollar {
				out.literal = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			out.quoted = true
			for _, in := range p.Parts {
				if lit, ok := in.(*syntax.Lit); ok {
					b.WriteString(unescape(lit.Value, true))
					continue
				}
				out.literal = false
				b.WriteString(source(src, in))
			}
		case *syntax.ProcSubst:
			out.literal = false
			if len(w.Parts) == 1 {
				// The command receives a pipe's name, which is no file.
				b.WriteString("/dev/fd/63")
				continue
			}
			b.WriteString(source(src, part))
		default:
			out.literal = false
			b.WriteString(source(src, part))
		}
	}
	out.text = b.String()
	return out, b.Len()
}

// unescape resolves backslashes as the shell does: outside quotes every
// backslash escapes the next character; inside double quotes only before
// $ ` " \ (a line continuation is already gone from the parsed literal).
func unescape(s string, inDouble bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if !inDouble || strings.IndexByte("$`\"\\\n", n) >= 0 {
				b.WriteByte(n)
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// source is n's text as written: the slice of src between its offsets (no
// copy, no re-printing, so reading a subtree costs nothing however deep
// it is); printed again only should its offsets not index src.
func source(src string, n syntax.Node) string {
	start, end := n.Pos(), n.End()
	if start.IsValid() && end.IsValid() && start.Offset() <= end.Offset() && int(end.Offset()) <= len(src) {
		return src[start.Offset():end.Offset()]
	}
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.Minify(true)).Print(&b, n); err != nil {
		return "$?"
	}
	return b.String()
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

// call examines one simple command.
func (w *shellWalker) call(args []*syntax.Word, redirs []*syntax.Redirect, st *dirState, depth int) {
	if w.x != nil {
		w.callWords(w.expandWords(args, *st), redirs, st, depth)
		return
	}
	w.callWords(w.words(args), redirs, st, depth)
}

// callWords examines one simple command given as its words.
func (w *shellWalker) callWords(ws []word, redirs []*syntax.Redirect, st *dirState, depth int) {
	// Look through wrappers to the command that runs. A wrapper that
	// changes directory for its command (env -C) does so on a copy.
	local := st
	for len(ws) > 0 {
		if !ws[0].literal {
			if w.x != nil {
				w.unknownProgram(ws, *local)
			}
			return // a command name assembled at run time
		}
		rest, chdir, ok := unwrap(path.Base(ws[0].text), ws[1:])
		if !ok {
			break
		}
		if chdir != nil {
			sub := *local
			applyChdir(&sub, *chdir, false)
			local = &sub
		}
		if rest == nil {
			return
		}
		ws = rest
	}
	if len(ws) == 0 {
		return
	}
	name := path.Base(ws[0].text)
	args1 := ws[1:]
	w.prog = name
	if w.x != nil && w.x.funcs[ws[0].text] {
		w.unknownCode("function "+ws[0].text+" writes paths from its arguments, which acc does not follow", args1, *local)
		return
	}
	if w.x != nil && w.readWriter(name, args1, redirs, *local, depth) {
		return
	}
	if w.x != nil && local == st && w.builtinAssign(name, args1, redirs, st) {
		return
	}
	switch name {
	case "cd", "pushd":
		if local != st {
			return // env -C … cd: changes nothing for the shell
		}
		p := parseArgs(args1, "", nil)
		if len(p.ops) == 0 {
			// cd alone goes to $HOME.
			if w.x != nil && strings.HasPrefix(w.x.env.Home, "/") && name == "cd" {
				st.chdir(w.x.env.Home, true)
				return
			}
			st.known = false
			return
		}
		applyChdir(st, p.ops[0], true)
	case "popd":
		if local == st {
			st.known = false
		}
	case "tee":
		w.addAll(parseArgs(args1, "", nil).ops, *local)
	case "touch":
		w.addAll(parseArgs(args1, "drt", []string{"date", "reference"}).ops, *local)
	case "truncate":
		w.addAll(parseArgs(args1, "sr", []string{"size", "reference"}).ops, *local)
	case "rm", "unlink", "rmdir":
		w.addAll(parseArgs(args1, "", nil).ops, *local)
	case "shred":
		w.addAll(parseArgs(args1, "ns", []string{"iterations", "size", "random-source"}).ops, *local)
	case "mkdir":
		w.addAll(parseArgs(args1, "m", []string{"mode"}).ops, *local)
	case "mv":
		w.copyLike(parseArgs(args1, "tS", []string{"target-directory", "suffix"}), true, *local)
	case "cp":
		w.copyLike(parseArgs(args1, "tS", []string{"target-directory", "suffix"}), false, *local)
	case "ln":
		p := parseArgs(args1, "tS", []string{"target-directory", "suffix"})
		if len(p.ops) == 1 && p.value("t", "target-directory") == nil {
			// ln TARGET makes a link named after it in the current directory.
			w.addWord(withText(p.ops[0], path.Base(p.ops[0].text)), *local)
			return
		}
		w.copyLike(p, false, *local)
	case "install":
		p := parseArgs(args1, "tmogS", []string{"target-directory", "mode", "owner", "group", "suffix", "strip-program"})
		if p.has("d", "directory") {
			w.addAll(p.ops, *local)
			return
		}
		w.copyLike(p, false, *local)
	case "rsync":
		p := parseArgs(args1, "eTBfM", rsyncValueFlags)
		if len(p.ops) >= 2 {
			w.addWord(p.ops[len(p.ops)-1], *local)
		}
	case "dd":
		for _, a := range args1 {
			if of, ok := strings.CutPrefix(a.text, "of="); ok {
				w.addWord(withText(a, of), *local)
			}
		}
	case "sed", "perl", "ruby":
		w.addAll(inPlaceTargets(name, args1), *local)
	case "git":
		w.git(args1, *local)
	case "curl":
		w.optionTargets(args1, "o", "output", "HdduXAebcDFTxyYzKEmwrCUQ", nil, *local)
	case "wget":
		w.optionTargets(args1, "Ooa", "output-document", "eiBtTwQPUlARDXI", []string{"output-file", "append-output"}, *local)
	case "sort":
		w.optionTargets(args1, "o", "output", "kStT", nil, *local)
	case "apply_patch", "applypatch":
		w.applyPatch(args1, redirs, *local)
	case "sh", "bash", "dash", "zsh", "ksh", "mksh":
		if w.x != nil && depth < maxShellNesting && shellReadsInput(args1) {
			w.scriptFromInput(name, redirs, *local, depth)
			return
		}
		if depth < maxShellNesting {
			if script, params, ok := shellScriptWord(args1); ok {
				if script.unknown {
					w.unknownCode(name+" -c runs a script acc cannot know before it runs", []word{script}, *local)
					return
				}
				sub := *local // a child shell: its cd stays there
				n := len(w.unknown())
				w.nested(script.text, &sub, depth+1)
				if len(w.unknown()) > n && len(params) > 0 {
					// What the script cannot name may be its arguments.
					w.unknownCode(name+" -c writes paths from its arguments, which acc does not follow", params, *local)
				}
			}
		}
	case "source", ".":
		if w.x != nil && depth < maxShellNesting && len(args1) > 0 && contains([]string{"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}, args1[0].text) {
			w.scriptFromInput(name, redirs, *local, depth)
		}
	case "eval":
		if depth < maxShellNesting && len(args1) > 0 {
			for _, a := range args1 {
				if a.unknown {
					w.unknownCode("eval runs text acc cannot know before it runs", args1, *local)
					return
				}
			}
			w.nested(strings.Join(texts(args1), " "), local, depth+1)
		}
	}
}

func applyChdir(st *dirState, dir word, logical bool) {
	if !dir.literal || dir.text == "" || dir.text == "-" || !dir.expanded && strings.HasPrefix(dir.text, "~") {
		st.known = false
		return
	}
	st.chdir(dir.text, logical)
}

// nested examines a script that a command runs (sh -c, eval). A script
// that does not parse runs nothing and gives no target.
func (w *shellWalker) nested(script string, st *dirState, depth int) {
	w.spend(len(script))
	if bracketDepth(script)+w.level > MaxShellDepth {
		panic(errWorkDone{tooDeep})
	}
	f, err := parseShell(script)
	if err != nil {
		return
	}
	outer := w.src
	w.src = script
	w.stmts(f.Stmts, st, depth)
	w.src = outer
}

func (w *shellWalker) addAll(ws []word, st dirState) {
	for _, a := range ws {
		w.addWord(a, st)
	}
}

// addWord records the word a as a target in st, or as an unknown write
// when it could not be expanded.
func (w *shellWalker) addWord(a word, st dirState) {
	if a.unknown {
		w.unknownWrite(w.prog+": the path it writes "+a.why, st, a.hints)
		return
	}
	w.add(a.text, st)
}

// copyLike handles cp, mv, ln and install: the destination is the last
// operand, or the -t directory. When the destination is surely a directory
// (-t, more than two operands, or a trailing slash) each source also lands
// inside it under its own name. mv also empties its sources.
func (w *shellWalker) copyLike(p parsed, sourcesToo bool, st dirState) {
	var dest string
	var destWord word
	var sources []word
	if t := p.value("t", "target-directory"); t != nil {
		dest, sources = *t, p.ops
		destWord = p.valueWord("t", "target-directory")
	} else {
		if len(p.ops) < 2 {
			return
		}
		destWord, sources = p.ops[len(p.ops)-1], p.ops[:len(p.ops)-1]
		dest = destWord.text
	}
	if sourcesToo {
		w.addAll(sources, st)
	}
	intoDir := p.value("t", "target-directory") != nil || len(p.ops) > 2 || strings.HasSuffix(dest, "/")
	if p.value("t", "target-directory") == nil {
		w.addWord(destWord, st)
	}
	if !intoDir {
		return
	}
	if destWord.unknown {
		return // recorded as the destination
	}
	for _, s := range sources {
		if s.unknown {
			continue // recorded with the sources, or lands in dest, reported
		}
		name := path.Base(s.text)
		if name == "." || name == "/" || name == ".." {
			continue
		}
		w.add(strings.TrimRight(dest, "/")+"/"+name, st)
	}
}

// git handles the subcommands that write working-tree files.
func (w *shellWalker) git(args []word, st dirState) {
	i := 0
	var elsewhere []word // --git-dir, --work-tree: a work tree git finds elsewhere
	var runs []word      // -c values that hold a command
global:
	for i < len(args) {
		t := args[i].text
		switch {
		case t == "-C" && i+1 < len(args):
			applyChdir(&st, args[i+1], false)
			i += 2
		case (t == "--git-dir" || t == "--work-tree") && i+1 < len(args):
			elsewhere = append(elsewhere, args[i+1])
			i += 2
		case strings.HasPrefix(t, "--git-dir=") || strings.HasPrefix(t, "--work-tree="):
			_, v, _ := strings.Cut(t, "=")
			elsewhere = append(elsewhere, withText(args[i], v))
			i++
		case (t == "-c" || t == "--config-env") && i+1 < len(args):
			// An alias given here is not in any config file GitTouched
			// reads: its expansion is not followed.
			key, _, _ := strings.Cut(args[i+1].text, "=")
			if args[i+1].unknown || strings.HasPrefix(strings.ToLower(key), "alias.") || strings.EqualFold(key, "core.worktree") {
				elsewhere = append(elsewhere, args[i+1])
			}
			if t == "-c" && gitCommandKey(key) {
				runs = append(runs, args[i+1])
			}
			i += 2
		case t == "--namespace" && i+1 < len(args):
			i += 2
		case strings.HasPrefix(t, "-"):
			i++
		default:
			break global
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].text, args[i+1:]
	if w.x != nil && len(runs) > 0 {
		// git runs the command such a key holds (a pager, an external
		// diff, a filter) for whatever subcommand follows, reads included.
		w.unknownCode("git -c with a key that holds a command runs a command acc does not follow", runs, st)
	}
	if w.x != nil && gitRunsCommand(sub, rest) {
		w.unknownCode("git "+sub+" runs a command acc does not follow", rest, st)
	}
	if w.x != nil {
		if len(elsewhere) > 0 && touchesWorktree(sub, rest) {
			w.unknownCode("git "+sub+" with --git-dir, --work-tree or -c alias.… works in a tree or runs a command acc does not follow", append(elsewhere, rest...), st)
			return
		} else {
			w.gitOp(args[i:], st)
		}
	}
	// Any subcommand that takes git's diff or revision options (diff, log,
	// show, blame, shortlog, format-patch, …) writes the file --output
	// names, so it is a target wherever it appears before "--".
	w.optionTargets(rest, "", "output", "", nil, st)
	switch sub {
	case "config":
		// git config -f FILE writes FILE unless it only reads it.
		p := parseArgs(rest, "f", []string{"file", "blob", "type", "default", "comment", "value"})
		f := p.valueWord("f", "file")
		reads := p.has("l", "list") || p.has("", "get") || p.has("", "get-all") || p.has("", "get-regexp") ||
			p.has("", "get-urlmatch") || p.has("", "get-color") || p.has("", "get-colorbool") ||
			len(p.ops) > 0 && contains([]string{"get", "list"}, p.ops[0].text)
		if p.value("f", "file") != nil && !reads {
			w.addWord(f, st)
		}
	case "restore":
		w.addAll(parseArgs(rest, "s", []string{"source"}).ops, st)
	case "checkout":
		for j, a := range rest {
			if a.text == "--" {
				w.addAll(rest[j+1:], st)
				break
			}
		}
	case "rm":
		w.addAll(parseArgs(rest, "", nil).ops, st)
	case "mv":
		w.copyLike(parseArgs(rest, "", nil), true, st)
	case "format-patch":
		// The patches go into the -o directory.
		w.optionTargets(rest, "o", "output-directory", "vS", nil, st)
	}
}

// gitCommandKey reports whether a configuration key given with git -c
// holds a command git may run (a pager, an editor, an external diff or
// textconv, a filter, a merge driver, a credential helper, a hook
// directory, a file to include): git runs it for reads too.
func gitCommandKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.hookspath", "core.askpass",
		"sequence.editor", "diff.external", "include.path", "credential.helper", "gpg.program":
		return true
	}
	for _, prefix := range []string{"pager.", "filter.", "includeif.", "credential.", "gpg."} {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	for _, suffix := range []string{".textconv", ".command", ".driver", ".cmd", ".program"} {
		if strings.HasPrefix(k, "diff.") || strings.HasPrefix(k, "merge.") || strings.HasPrefix(k, "difftool.") || strings.HasPrefix(k, "mergetool.") {
			if strings.HasSuffix(k, suffix) {
				return true
			}
		}
	}
	return false
}

// gitRunsCommand reports whether git sub, with its arguments, runs a
// command given on its own command line: submodule foreach, difftool
// -x/--extcmd, grep -O/--open-files-in-pager, bisect run, rebase
// -x/--exec.
func gitRunsCommand(sub string, rest []word) bool {
	has := func(names ...string) bool {
		for _, a := range rest {
			if a.text == "--" {
				return false
			}
			for _, n := range names {
				if a.text == n || strings.HasPrefix(a.text, n+"=") || len(n) == 2 && n[1] != '-' && strings.HasPrefix(a.text, n) {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "submodule":
		for _, a := range rest {
			if !strings.HasPrefix(a.text, "-") {
				return a.text == "foreach"
			}
		}
	case "difftool":
		return has("-x", "--extcmd")
	case "grep":
		return has("-O", "--open-files-in-pager")
	case "bisect":
		return len(rest) > 0 && rest[0].text == "run"
	case "rebase":
		return has("-x", "--exec")
	}
	return false
}

// optionTargets reports the values of the options that name a file the
// command writes (curl -o, wget -O, sort -o): short letters in targetShort,
// the long name targetLong (and extraLong); otherShort are the command's
// other short options that take a value, so that a cluster is read right.
func (w *shellWalker) optionTargets(args []word, targetShort, targetLong, otherShort string, extraLong []string, st dirState) {
	longs := append([]string{targetLong}, extraLong...)
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			return
		}
		if name, ok := strings.CutPrefix(t, "--"); ok {
			n, v, hasEq := strings.Cut(name, "=")
			for _, l := range longs {
				if n != l {
					continue
				}
				vw := withText(args[i], v)
				if !hasEq && i+1 < len(args) {
					i++
					v, vw = args[i].text, args[i]
				}
				if v != "-" {
					w.addWord(vw, st)
				}
			}
			continue
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			continue
		}
		s := t[1:]
		for j := 0; j < len(s); j++ {
			c := s[j]
			isTarget := strings.IndexByte(targetShort, c) >= 0
			if !isTarget && strings.IndexByte(otherShort, c) < 0 {
				continue
			}
			v, vw := s[j+1:], withText(args[i], s[j+1:])
			if v == "" && i+1 < len(args) {
				i++
				v, vw = args[i].text, args[i]
			}
			if isTarget && v != "-" {
				w.addWord(vw, st)
			}
			break
		}
	}
}

// applyPatch reads the patch an apply_patch command is given, from a
// heredoc or here-string or its first argument.
func (w *shellWalker) applyPatch(args []word, redirs []*syntax.Redirect, st dirState) {
	var bodies []string
	for _, r := range redirs {
		switch {
		case r.Hdoc != nil:
			bodies = append(bodies, w.word(r.Hdoc).text)
		case r.Op == syntax.WordHdoc:
			bodies = append(bodies, w.word(r.Word).text)
		}
	}
	if len(args) > 0 {
		bodies = append(bodies, args[0].text)
	}
	for _, b := range bodies {
		for _, t := range PatchTargets(b) {
			w.add(t, st)
		}
	}
}

// shellScriptWord finds the script of "sh [options] -c SCRIPT [name
// args…]".
func shellScriptWord(args []word) (script word, params []word, ok bool) {
	dashC := false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" || t == "-" {
			i++
			if dashC && i < len(args) {
				return args[i], args[i+1:], true
			}
			return word{}, nil, false
		}
		if (strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) && len(t) > 1 {
			if strings.HasPrefix(t, "--") {
				continue // --norc, --login, …
			}
			if strings.ContainsRune(t, 'c') {
				dashC = true
			}
			if strings.ContainsAny(t, "oO") && i+1 < len(args) {
				i++ // -o option / -O shopt take a name
			}
			continue
		}
		return args[i], args[i+1:], dashC
	}
	return word{}, nil, false
}

// shellReadsInput reports whether a shell given args reads its script
// from its input: no -c and no script operand, or -s.
func shellReadsInput(args []word) bool {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if args[i].unknown {
			return false
		}
		if t == "-" || t == "--" {
			return i+1 >= len(args)
		}
		if (strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) && len(t) > 1 {
			if strings.HasPrefix(t, "--") {
				continue
			}
			if strings.ContainsRune(t, 'c') {
				return false
			}
			if strings.ContainsRune(t, 's') {
				return true
			}
			if strings.ContainsAny(t, "oO") && i+1 < len(args) {
				i++
			}
			continue
		}
		return false // a script file
	}
	return true
}

// scriptFromInput judges the script a shell (or source /dev/stdin) reads
// from its input: a heredoc or here-string is read as the script it is; a
// pipe's is not seen, its hints being the earlier stages' words; a file
// given with < is read when it can be.
func (w *shellWalker) scriptFromInput(name string, redirs []*syntax.Redirect, st dirState, depth int) {
	for _, r := range redirs {
		var text word
		switch {
		case r.Hdoc != nil:
			text = w.word(r.Hdoc)
		case r.Op == syntax.WordHdoc:
			text = w.expandWord(r.Word, st, false)[0]
		case r.Op == syntax.RdrIn:
			src := w.expandWord(r.Word, st, false)[0]
			if src.unknown {
				w.unknownCode(name+" runs a script from a file acc cannot know", []word{src}, st)
				return
			}
			body, err := w.readFile(src.text, st)
			if err != nil {
				return // a file acc cannot read: a program it cannot look into
			}
			text = word{text: body, literal: true}
		default:
			continue
		}
		if text.unknown || !text.literal {
			w.unknownCode(name+" runs a script from its input that acc cannot know before it runs", []word{text}, st)
			return
		}
		sub := st // a child shell: its cd stays there
		w.nested(text.text, &sub, depth+1)
		return
	}
	if len(w.pipeHints) > 0 {
		w.unknownWrite(name+" runs a script from its input, which acc cannot see", st, w.pipeHints)
	}
}

// withText is the word a carrying the text t (a part of a's text, such as
// an option's attached value).
func withText(a word, t string) word {
	a.text = t
	return a
}

// unwrap looks through one wrapper command: it returns the words of the
// command the wrapper runs (nil when it runs none, as in "command -v x"),
// the directory it changes to for that command if any, and ok=false when
// name is not a wrapper.
func unwrap(name string, args []word) (rest []word, chdir *word, ok bool) {
	switch name {
	case "sudo", "doas":
		return afterOptions(args, "ugCDhprtUTR", []string{"user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "other-user", "command-timeout", "chroot"}), nil, true
	case "command":
		for _, a := range args {
			if !strings.HasPrefix(a.text, "-") || a.text == "-" || a.text == "--" {
				break
			}
			if strings.ContainsAny(a.text, "vV") {
				return nil, nil, true // command -v: a lookup, runs nothing
			}
		}
		return afterOptions(args, "", nil), nil, true
	case "builtin", "nohup":
		return afterOptions(args, "", nil), nil, true
	case "exec":
		return afterOptions(args, "a", nil), nil, true
	case "time":
		return afterOptions(args, "fo", []string{"format", "output"}), nil, true
	case "nice":
		return afterOptions(args, "n", []string{"adjustment"}), nil, true
	case "ionice":
		return afterOptions(args, "cnpPu", []string{"class", "classdata", "pid", "pgid", "uid"}), nil, true
	case "stdbuf":
		return afterOptions(args, "ioe", []string{"input", "output", "error"}), nil, true
	case "timeout":
		rest := afterOptions(args, "sk", []string{"signal", "kill-after"})
		if len(rest) > 0 {
			rest = rest[1:] // the duration
		}
		return rest, nil, true
	case "env":
		var dir *word
		i := 0
	options:
		for i < len(args) {
			t := args[i].text
			switch {
			case t == "--":
				i++
				for i < len(args) && isAssignment(args[i].text) {
					i++
				}
				break options
			case (t == "-C" || t == "--chdir") && i+1 < len(args):
				d := args[i+1]
				dir = &d
				i += 2
			case strings.HasPrefix(t, "--chdir="):
				d := args[i]
				d.text = strings.TrimPrefix(t, "--chdir=")
				dir = &d
				i++
			case strings.HasPrefix(t, "-C") && len(t) > 2:
				d := args[i]
				d.text = t[2:]
				dir = &d
				i++
			case (t == "-u" || t == "--unset" || t == "-S" || t == "--split-string") && i+1 < len(args):
				i += 2
			case strings.HasPrefix(t, "-"), isAssignment(t):
				i++ // "-" alone is -i
			default:
				break options
			}
		}
		if i >= len(args) {
			return nil, dir, true
		}
		return args[i:], dir, true
	}
	return nil, nil, false
}

func isAssignment(t string) bool {
	name, _, ok := strings.Cut(t, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// afterOptions skips a wrapper's own options and returns its command.
func afterOptions(args []word, shortValue string, longValue []string) []word {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			return args[i+1:]
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			if isAssignment(t) {
				continue // sudo NAME=value cmd
			}
			return args[i:]
		}
		if name, ok := strings.CutPrefix(t, "--"); ok {
			if !strings.Contains(name, "=") && contains(longValue, name) {
				i++
			}
			continue
		}
		s := t[1:]
		for j := 0; j < len(s); j++ {
			if strings.IndexByte(shortValue, s[j]) >= 0 {
				if j+1 == len(s) {
					i++
				}
				break
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parsed is a command's arguments split getopt-style.
type parsed struct {
	ops  []word
	opts []option
}

type option struct {
	name  string
	value *string
	vword word // the value as a word (its text is *value)
}

func (p parsed) has(short, long string) bool {
	for _, o := range p.opts {
		if o.name == short || o.name == long {
			return true
		}
	}
	return false
}

// valueWord is the word of the last value of option short or long.
func (p parsed) valueWord(short, long string) word {
	var v word
	for _, o := range p.opts {
		if (o.name == short || o.name == long) && o.value != nil {
			v = o.vword
		}
	}
	return v
}

func (p parsed) value(short, long string) *string {
	var v *string
	for _, o := range p.opts {
		if (o.name == short || o.name == long) && o.value != nil {
			v = o.value
		}
	}
	return v
}

// parseArgs splits args into options and operands the way GNU getopt
// does: options may come anywhere before "--"; a short option in
// shortValue and a long option in longValue take a value (attached or the
// next word); "-" is an operand.
func parseArgs(args []word, shortValue string, longValue []string) parsed {
	var p parsed
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		if t == "--" {
			p.ops = append(p.ops, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			p.ops = append(p.ops, a)
			continue
		}
		if name, ok := strings.CutPrefix(t, "--"); ok {
			n, v, hasEq := strings.Cut(name, "=")
			switch {
			case hasEq:
				p.opts = append(p.opts, option{n, &v, withText(a, v)})
			case contains(longValue, n) && i+1 < len(args):
				i++
				v := args[i].text
				p.opts = append(p.opts, option{n, &v, args[i]})
			default:
				p.opts = append(p.opts, option{name: n})
			}
			continue
		}
		s := t[1:]
		for j := 0; j < len(s); j++ {
			c := string(s[j])
			if strings.IndexByte(shortValue, s[j]) < 0 {
				p.opts = append(p.opts, option{name: c})
				continue
			}
			v, vw := s[j+1:], withText(a, s[j+1:])
			if v == "" && i+1 < len(args) {
				i++
				v, vw = args[i].text, args[i]
			}
			p.opts = append(p.opts, option{c, &v, vw})
			break
		}
	}
	return p
}

var rsyncValueFlags = []string{
	"rsh", "exclude", "include", "filter", "exclude-from", "include-from", "files-from",
	"temp-dir", "partial-dir", "backup-dir", "compare-dest", "copy-dest", "link-dest",
	"chmod", "chown", "block-size", "max-size", "min-size", "max-delete", "remote-option",
	"password-file", "port", "timeout", "contimeout", "log-file", "log-file-format",
	"out-format", "suffix", "rsync-path", "skip-compress", "usermap", "groupmap", "bwlimit",
	"iconv", "checksum-choice", "compress-choice", "compress-level", "modify-window",
	"sockopts", "address", "info", "debug", "outbuf",
}

// inPlaceTargets returns the files sed, perl or ruby edit in place: with an
// in-place flag (-i, -i<suffix>, --in-place[=suffix]) every operand is a
// file, except the first when no script was given by an option (-e, -f,
// --expression, --file). With BSD sed a quoted empty or dotted word after a
// bare -i (as in -i '.bak') is the backup suffix, not the script.
func inPlaceTargets(cmd string, args []word) []word {
	var scriptFlags, valueFlags string
	switch cmd {
	case "sed":
		scriptFlags, valueFlags = "ef", "efl"
	case "perl":
		scriptFlags, valueFlags = "eE", "eEMmIx"
	case "ruby":
		scriptFlags, valueFlags = "e", "erICEFx"
	}
	inPlace, scriptGiven := false, false
	var ops []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		if t == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			ops = append(ops, a)
			continue
		}
		if name, ok := strings.CutPrefix(t, "--"); ok {
			n, _, hasEq := strings.Cut(name, "=")
			switch n {
			case "in-place":
				inPlace = true
			case "expression", "file":
				scriptGiven = true
				if !hasEq {
					i++
				}
			case "line-length":
				if !hasEq {
					i++
				}
			}
			continue
		}
		s := t[1:]
		for j := 0; j < len(s); j++ {
			c := s[j]
			if c == 'i' {
				inPlace = true
				if cmd == "sed" && j+1 == len(s) && i+1 < len(args) {
					next := args[i+1]
					if next.quoted && (next.text == "" || strings.HasPrefix(next.text, ".")) {
						i++
					}
				}
				break // the rest of the word is the backup suffix
			}
			if strings.IndexByte(valueFlags, c) >= 0 {
				if strings.IndexByte(scriptFlags, c) >= 0 {
					scriptGiven = true
				}
				if j+1 == len(s) {
					i++
				}
				break
			}
		}
	}
	if !inPlace {
		return nil
	}
	if !scriptGiven && len(ops) > 0 {
		ops = ops[1:]
	}
	return ops
}

// ShellPatch reports whether a shell command line is nothing but one
// apply_patch (or applypatch) call carrying its patch in a heredoc or
// here-string, or as its one argument, and returns that patch. It is the
// form in which Codex 0.171 hands its own file edits to its shell tool
// (`apply_patch <<'EOF' … EOF`; the hook sees a Bash call) and which Codex
// applies itself instead of running a shell: such a call is a file edit
// whose targets are the patch's header paths ([PatchTargets]). Anything
// else — another command beside it, a redirection, an assignment, a cd
// first — is not, and stays a shell command for [ShellWriteTargets]. A
// command over [MaxShellCommand] bytes or nested deeper than
// [MaxShellDepth], or without the word apply_patch or applypatch in it, is
// not parsed and is not a patch. It never panics.
func ShellPatch(command string) (patch string, ok bool) {
	defer func() {
		if recover() != nil {
			patch, ok = "", false
		}
	}()
	if len(command) > MaxShellCommand || !strings.Contains(command, "applypatch") && !strings.Contains(command, "apply_patch") ||
		bracketDepth(command) > MaxShellDepth {
		return "", false
	}
	file, err := parseShell(command)
	if err != nil || len(file.Stmts) != 1 {
		return "", false
	}
	s := file.Stmts[0]
	call, isCall := s.Cmd.(*syntax.CallExpr)
	if !isCall || s.Negated || s.Background || s.Coprocess || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return "", false
	}
	wordOf := func(x *syntax.Word) word { out, _ := wordIn(command, x); return out }
	if name := wordOf(call.Args[0]); !name.literal || (name.text != "apply_patch" && name.text != "applypatch") {
		return "", false
	}
	switch {
	case len(call.Args) == 1 && len(s.Redirs) == 1:
		r := s.Redirs[0]
		switch {
		case r.Hdoc != nil && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc):
			patch = wordOf(r.Hdoc).text
		case r.Op == syntax.WordHdoc:
			patch = wordOf(r.Word).text
		default:
			return "", false
		}
	case len(call.Args) == 2 && len(s.Redirs) == 0:
		patch = wordOf(call.Args[1]).text
	default:
		return "", false
	}
	if !IsPatchEnvelope(patch) {
		return "", false
	}
	return patch, true
}
