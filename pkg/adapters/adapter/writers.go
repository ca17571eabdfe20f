package adapter

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// readWriter judges, for ReadShell, the programs ShellWriteTargets does not
// know (docs/hooks.md#writers): it records what name with args writes
// in st and reports whether it handled the command; false leaves it to
// the common table.
func (w *shellWalker) readWriter(name string, args []word, redirs []*syntax.Redirect, st dirState, depth int) bool {
	switch name {
	case "chmod":
		w.addAll(chmodFiles(args), st)
	case "chown", "chgrp":
		p := parseArgs(args, "", []string{"reference", "from"})
		ops := p.ops
		if p.value("", "reference") == nil && len(ops) > 0 {
			ops = ops[1:] // the owner or group
		}
		w.addAll(ops, st)
	case "awk", "gawk":
		w.awk(args, st)
	case "gofmt":
		if set, ops := goFlags(args, "r", "cpuprofile"); set["w"] {
			w.addAll(ops, st)
		}
	case "goimports":
		if set, ops := goFlags(args, "local", "srcdir", "cpuprofile", "memprofile", "memrate", "trace"); set["w"] {
			w.addAll(ops, st)
		}
	case "shfmt":
		if set, ops := goFlags(args, "i", "ln", "indent", "language-dialect", "filename"); set["w"] || set["write"] {
			w.addAll(ops, st)
		}
	case "go":
		w.goTool(args, st)
	case "prettier":
		p := parseArgs(args, "", []string{"config", "ignore-path", "plugin", "parser", "log-level", "stdin-filepath",
			"cache-location", "cache-strategy", "print-width", "tab-width", "trailing-comma", "arrow-parens",
			"end-of-line", "prose-wrap", "quote-props", "html-whitespace-sensitivity", "embedded-language-formatting",
			"object-wrap", "config-precedence"})
		if p.has("w", "write") {
			w.addAll(p.ops, st)
		}
	case "eslint":
		p := parseArgs(args, "cfo", []string{"config", "ext", "rule", "format", "output-file", "ignore-path", "parser",
			"parser-options", "plugin", "env", "global", "resolve-plugins-relative-to", "rulesdir", "max-warnings",
			"cache-location", "cache-strategy", "ignore-pattern", "stdin-filename", "flag"})
		if o := p.value("o", "output-file"); o != nil {
			w.addWord(p.valueWord("o", "output-file"), st)
		}
		if p.has("", "fix") {
			w.addAll(p.ops, st)
		}
	case "black":
		p := parseArgs(args, "ltcW", []string{"line-length", "target-version", "include", "exclude", "extend-exclude",
			"force-exclude", "config", "code", "workers", "python-cell-magics", "stdin-filename", "required-version"})
		if !p.has("", "check") && !p.has("", "diff") && p.value("c", "code") == nil {
			w.addAll(p.ops, st)
		}
	case "isort":
		p := parseArgs(args, "lpoasj", []string{"settings-path", "sp", "settings-file", "line-length", "profile", "project",
			"thirdparty", "add-import", "rm", "skip", "src", "jobs", "filter-files", "virtual-env", "conda-env"})
		if !p.has("c", "check-only") && !p.has("", "check") && !p.has("", "diff") && !p.has("d", "stdout") {
			w.addAll(p.ops, st)
		}
	case "autopep8":
		p := parseArgs(args, "jp", []string{"select", "ignore", "max-line-length", "jobs", "exclude", "global-config",
			"range", "line-range", "pep8-passes", "indent-size", "experimental"})
		if p.has("i", "in-place") {
			w.addAll(p.ops, st)
		}
	case "ruff":
		w.ruff(args, st)
	case "rustfmt":
		p := parseArgs(args, "", []string{"edition", "config-path", "config", "emit", "color", "style-edition"})
		if e := p.value("", "emit"); !p.has("", "check") && (e == nil || *e == "files") {
			w.addAll(p.ops, st)
		}
	case "clang-format":
		inPlace := false
		var ops []word
		for _, a := range args {
			switch {
			case a.text == "-i" || a.text == "--i":
				inPlace = true
			case !strings.HasPrefix(a.text, "-"):
				ops = append(ops, a)
			}
		}
		if inPlace {
			w.addAll(ops, st)
		}
	case "find":
		w.find(args, st, depth)
	case "xargs":
		w.xargs(args, redirs, st, depth)
	case "parallel":
		w.parallel(args, st, depth)
	case "vim", "vi", "nvim", "ex", "vimdiff", "gvim", "nano", "pico", "micro", "emacs", "ed", "red":
		w.editor(name, args, st)
	case "patch":
		w.patch(args, redirs, st)
	case "tar", "gtar", "bsdtar":
		w.tar(args, st)
	case "unzip":
		w.unzip(args, st)
	case "npx", "bunx", "pnpx", "uvx":
		// A package runner runs the tool named after its options.
		rest := afterOptions(args, "p", []string{"package", "from", "with"})
		if len(rest) > 0 {
			sub := st
			w.callWords(rest, redirs, &sub, depth)
		}
	case "perl", "ruby":
		if inPlaceTargets(name, args) != nil {
			return false // an in-place edit: the common table
		}
		return w.inlineCode(name, args, redirs, st)
	default:
		return w.inlineCode(name, args, redirs, st)
	}
	return true
}

// chmodFiles are chmod's file operands: all operands after the mode, or
// all of them when the mode was read as an option (-w, -x) or --reference
// names it.
func chmodFiles(args []word) []word {
	p := parseArgs(args, "", []string{"reference"})
	if p.value("", "reference") != nil {
		return p.ops
	}
	for _, a := range args {
		if a.text == "--" {
			break
		}
		if t, ok := strings.CutPrefix(a.text, "-"); ok && t != "" && strings.Trim(t, "rwxXstugo=+-,0123456789") == "" && strings.Trim(t, "cfvR") != "" {
			return p.ops // -w and such: the mode
		}
	}
	if len(p.ops) > 0 {
		return p.ops[1:]
	}
	return nil
}

// goFlags splits args the way Go's flag package does: flags (one or two
// dashes, value attached with = or, for the names in values, the next
// word) until the first operand or "--"; everything after is an operand.
func goFlags(args []word, values ...string) (map[string]bool, []word) {
	set := map[string]bool{}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			return set, args[i+1:]
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			return set, args[i:]
		}
		n, _, hasEq := strings.Cut(strings.TrimLeft(t, "-"), "=")
		set[n] = true
		if !hasEq && contains(values, n) {
			i++
		}
	}
	return set, nil
}

// awk: gawk -i inplace (or --include=inplace) edits its file operands.
func (w *shellWalker) awk(args []word, st dirState) {
	inPlace, programGiven := false, false
	var ops []word
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case t == "-i" || t == "--include" || t == "-l" || t == "--load":
			if i+1 < len(args) {
				i++
				inPlace = inPlace || strings.HasPrefix(args[i].text, "inplace")
			}
		case strings.HasPrefix(t, "--include="), strings.HasPrefix(t, "-i") && len(t) > 2:
			v := strings.TrimPrefix(strings.TrimPrefix(t, "--include="), "-i")
			inPlace = inPlace || strings.HasPrefix(v, "inplace")
		case t == "-f" || t == "--file" || t == "-e" || t == "--source":
			programGiven = true
			i++
		case t == "-v" || t == "-F" || t == "--assign" || t == "--field-separator":
			i++
		case strings.HasPrefix(t, "-") && t != "-":
			if strings.HasPrefix(t, "-f") || strings.HasPrefix(t, "--file=") || strings.HasPrefix(t, "-e") || strings.HasPrefix(t, "--source=") {
				programGiven = true
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !inPlace {
		return
	}
	if !programGiven && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, o := range ops {
		if !o.unknown && isAssignment(o.text) {
			continue // var=value among the files
		}
		w.addWord(o, st)
	}
}

// goTool: go fmt formats the packages' directories; go mod tidy and go
// get rewrite go.mod and go.sum.
func (w *shellWalker) goTool(args []word, st dirState) {
	if len(args) == 0 {
		return
	}
	switch args[0].text {
	case "fmt":
		p := parseArgs(args[1:], "", []string{"mod", "modfile"})
		if p.has("n", "n") {
			return
		}
		if len(p.ops) == 0 {
			w.add(".", st)
		}
		for _, o := range p.ops {
			if o.unknown {
				w.addWord(o, st)
				continue
			}
			dir := strings.TrimSuffix(strings.TrimSuffix(o.text, "..."), "/")
			switch {
			case dir == "" && strings.HasPrefix(o.text, "/"):
				w.add("/", st)
			case dir == "":
				w.add(".", st)
			case strings.HasPrefix(dir, ".") || strings.HasPrefix(dir, "/"):
				w.add(dir, st)
			default:
				w.unknownWrite("go fmt names a package by import path, which acc does not resolve", st, []string{o.text})
			}
		}
	case "get":
		w.add("go.mod", st)
		w.add("go.sum", st)
	case "mod":
		if len(args) > 1 && (args[1].text == "tidy" || args[1].text == "edit" && !contains(texts(args), "-json") && !contains(texts(args), "-print")) {
			w.add("go.mod", st)
			if args[1].text == "tidy" {
				w.add("go.sum", st)
			}
		}
	}
}

// ruff: ruff format (unless --check or --diff) and ruff check --fix
// rewrite their paths (the cwd when none is named).
func (w *shellWalker) ruff(args []word, st dirState) {
	if len(args) == 0 {
		return
	}
	p := parseArgs(args[1:], "", []string{"config", "select", "ignore", "extend-select", "extend-ignore", "line-length",
		"target-version", "exclude", "extend-exclude", "output-format", "cache-dir", "stdin-filename", "per-file-ignores",
		"fixable", "unfixable", "range", "extend-fixable"})
	switch args[0].text {
	case "format":
		if p.has("", "check") || p.has("", "diff") {
			return
		}
	case "check":
		if !p.has("", "fix") || p.has("", "no-fix") || p.has("", "diff") {
			return
		}
	default:
		return
	}
	if len(p.ops) == 0 {
		w.add(".", st)
	}
	w.addAll(p.ops, st)
}

// find writes with -delete, with -exec/-execdir/-ok/-okdir running a
// writer, and into the files of -fprint/-fprint0/-fprintf/-fls. Its
// targets are then its start paths (the cwd when none), each standing for
// everything under it, and what the -exec command writes apart from the
// found file.
func (w *shellWalker) find(args []word, st dirState, depth int) {
	i := 0
	for i < len(args) {
		t := args[i].text
		if t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O") {
			i++
			continue
		}
		if t == "-D" {
			i += 2
			continue
		}
		break
	}
	var starts []word
	for i < len(args) {
		t := args[i].text
		if !args[i].unknown && (strings.HasPrefix(t, "-") && len(t) > 1 || t == "(" || t == "!" || t == ")" || t == ",") {
			break
		}
		starts = append(starts, args[i])
		i++
	}
	writes := false
	var certain []string
	for ; i < len(args); i++ {
		switch args[i].text {
		case "-delete":
			writes = true
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				w.addWord(args[i+1], st)
				i++
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			cmd := args[i+1 : j]
			i = j
			if len(cmd) == 0 {
				continue
			}
			targets, wr, _ := w.scratch(func() {
				sub := st
				w.callWords(cmd, nil, &sub, depth)
			})
			if wr {
				writes = true
				for _, t := range targets {
					if !strings.Contains(t, "{}") {
						certain = append(certain, t)
					}
				}
			}
		}
	}
	if !writes {
		return
	}
	w.prog = "find"
	if len(starts) == 0 {
		w.add(".", st)
	}
	w.addAll(starts, st)
	for _, t := range certain {
		w.add(t, dirState{known: true}) // already placed by the -exec command
	}
}

// xargs runs its command on words read from its input, which acc cannot
// see: when that command writes, the write is unknown, its hints being the
// command's own words, the pipeline's earlier words, the words of a list
// file given with -a or < and those of a heredoc or here-string.
func (w *shellWalker) xargs(args []word, redirs []*syntax.Redirect, st dirState, depth int) {
	cmd := afterOptions(args, "adEILnPs", []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"})
	if len(cmd) == 0 {
		return // echo: prints
	}
	hints, writes := w.writesPerInput(cmd, st, depth)
	if !writes {
		return
	}
	for _, a := range cmd[1:] {
		if !a.unknown {
			hints = append(hints, codeTokens(a.text)...)
		}
	}
	hints = append(hints, w.pipeHints...)
	list := parseArgs(args[:len(args)-len(cmd)], "adEILnPs", []string{"arg-file"}).valueWord("a", "arg-file")
	for _, r := range redirs {
		switch {
		case r.Op == syntax.RdrIn && r.Word != nil:
			list = w.word(r.Word)
		case r.Hdoc != nil:
			hints = append(hints, codeTokens(w.word(r.Hdoc).text)...)
		case r.Op == syntax.WordHdoc && r.Word != nil:
			hints = append(hints, codeTokens(w.word(r.Word).text)...)
		}
	}
	if list.text != "" && list.literal {
		if text, err := w.readFile(list.text, st); err == nil {
			hints = append(hints, codeTokens(text)...)
		}
	}
	w.unknownWrite("xargs "+path.Base(cmd[0].text)+" takes what it writes from its input", st, hints)
}

// writesPerInput judges cmd, a command xargs or parallel runs once per
// input item, with the words read from the input as one placeholder
// operand after its own (or in place of the -I string). It reports whether
// cmd writes, and the hints so far: what the walk of cmd hinted, and the
// targets it named that do not come from the placeholder.
func (w *shellWalker) writesPerInput(cmd []word, st dirState, depth int) (hints []string, writes bool) {
	withInput := append(slices.Clip(cmd), word{text: "{}", literal: true, expanded: true})
	targets, writes, hints := w.scratch(func() {
		sub := st
		w.callWords(withInput, nil, &sub, depth)
	})
	for _, t := range targets {
		if !strings.Contains(t, "{}") {
			hints = append(hints, t)
		}
	}
	return hints, writes
}

// parallel (GNU parallel) runs its command once per argument, taken
// after ::: (or from the files after ::::) or from its input: when that
// command writes, the write is unknown, hinted by the command's own words,
// the arguments and the pipeline's earlier words, as for xargs.
func (w *shellWalker) parallel(args []word, st dirState, depth int) {
	end := len(args)
	for i, a := range args {
		if strings.HasPrefix(a.text, ":::") && strings.Trim(a.text, ":+") == "" {
			end = i
			break
		}
	}
	cmd := afterOptions(args[:end], "jSaEIdnNPX", []string{"jobs", "sshlogin", "arg-file", "delimiter", "eof", "colsep",
		"max-args", "max-replace-args", "max-procs", "delay", "timeout", "joblog", "results", "tmpdir", "workdir", "env",
		"load", "memfree", "retries", "basefile", "transfer-file", "return", "tag-string", "sshloginfile", "halt"})
	if len(cmd) == 0 {
		return
	}
	hints, writes := w.writesPerInput(cmd, st, depth)
	if !writes {
		return
	}
	for _, a := range append(slices.Clip(cmd[1:]), args[end:]...) {
		if a.unknown {
			hints = append(hints, a.hints...)
		} else {
			hints = append(hints, codeTokens(a.text)...)
		}
	}
	hints = append(hints, w.pipeHints...)
	w.unknownWrite("parallel "+path.Base(cmd[0].text)+" takes what it writes from its arguments or input", st, hints)
}

// editor: a text editor writes the files it opens (run by an agent it
// works from its -c/+ commands or script input); vim -R and -M, and
// view, open them read-only.
func (w *shellWalker) editor(name string, args []word, st dirState) {
	var ops []word
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(t, "+") && !args[i].unknown:
			// +N or +cmd: a command, not a file
		case strings.HasPrefix(t, "-") && len(t) > 1 && !args[i].unknown:
			if strings.HasPrefix(t, "--") {
				if contains([]string{"--cmd", "--eval", "--load", "--funcall", "--directory", "--script", "--execute", "--insert", "--find-file"}, t) {
					if t == "--find-file" || t == "--insert" {
						if i+1 < len(args) {
							ops = append(ops, args[i+1])
						}
					}
					i++
				}
				continue
			}
			if strings.HasPrefix(name, "vi") || name == "nvim" || name == "ex" || name == "gvim" {
				if strings.ContainsAny(t[1:], "RM") {
					return // read-only
				}
				// The last letter of a cluster may take the next word
				// (-c cmd, -S file; -s scriptin, except in ex mode).
				last := t[len(t)-1]
				valued := strings.IndexByte("cSuUiTwWtq", last) >= 0 ||
					last == 's' && name != "ex" && !strings.ContainsAny(t[1:], "eE")
				if valued {
					i++
				}
			}
			if (name == "ed" || name == "red") && t == "-p" {
				i++
			}
			if name == "emacs" && contains([]string{"-l", "-f", "-L", "-eval", "-load", "-funcall", "-u", "-t", "-d"}, t) {
				i++
			}
		default:
			ops = append(ops, args[i])
		}
	}
	w.addAll(ops, st)
}

// patch writes its file operand, or the files its patch names (read from
// -i FILE, its second operand, a heredoc or < FILE; the unified or
// context diff headers, or a Codex patch's), and the -o file.
func (w *shellWalker) patch(args []word, redirs []*syntax.Redirect, st dirState) {
	p := parseArgs(args, "iodpFBDrVYzg", []string{"input", "output", "directory", "strip", "fuzz", "prefix", "ifdef",
		"reject-file", "version-control", "basename-prefix", "suffix", "get", "quoting-style", "reject-format", "read-only"})
	if p.has("", "dry-run") || p.has("C", "check") {
		return
	}
	if d := p.value("d", "directory"); d != nil {
		applyChdir(&st, p.valueWord("d", "directory"), false)
	}
	if o := p.value("o", "output"); o != nil {
		w.addWord(p.valueWord("o", "output"), st)
		if *o != "-" {
			return // the original stays as it is
		}
	}
	if len(p.ops) > 0 {
		w.addWord(p.ops[0], st)
		return
	}
	strip := -1
	if s := p.value("p", "strip"); s != nil {
		if n, err := strconv.Atoi(*s); err == nil && n >= 0 {
			strip = n
		}
	}
	var text string
	src := p.valueWord("i", "input")
	if len(p.ops) > 1 {
		src = p.ops[1]
	}
	found := src.text != ""
	for _, r := range redirs {
		switch {
		case found:
		case r.Hdoc != nil:
			text, found = w.word(r.Hdoc).text, true
		case r.Op == syntax.WordHdoc:
			text, found = w.word(r.Word).text, true
		case r.Op == syntax.RdrIn:
			src, found = w.word(r.Word), true
		}
	}
	if src.text != "" {
		var err error
		if src.unknown || !src.literal && !src.expanded {
			err = errUnreadable
		} else {
			text, err = w.readFile(src.text, st)
		}
		if err != nil {
			w.unknownWrite("patch reads its patch from a file acc could not read", st, append(codeTokens(src.text), src.hints...))
			return
		}
	} else if !found {
		w.unknownWrite("patch reads its patch from its input, which acc cannot see", st, w.pipeHints)
		return
	}
	names := diffNames(text, strip)
	if len(names) == 0 {
		w.unknownWrite("patch was given text in which acc finds no file names", st, nil)
		return
	}
	for _, n := range names {
		w.add(n, st)
	}
}

// diffNames are the files a diff writes: the names on its ---/+++ (and
// context ***) header lines, less /dev/null and a trailing timestamp,
// with strip leading components removed (strip < 0: as written and the
// base name, the two readings of a patch without -p); or a Codex patch's
// header paths.
func diffNames(text string, strip int) []string {
	if IsPatchEnvelope(text) {
		return PatchTargets(text)
	}
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		var name string
		switch {
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
			name = line[4:]
		case strings.HasPrefix(line, "*** ") && !strings.HasPrefix(line, "*** Begin") && !strings.HasSuffix(strings.TrimSpace(line), "****"):
			name = line[4:]
		default:
			continue
		}
		name, _, _ = strings.Cut(name, "\t")
		name = strings.TrimSpace(strings.Trim(strings.TrimSpace(name), `"`))
		if name == "" || name == "/dev/null" || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "*") {
			continue
		}
		if strip < 0 {
			out = append(out, name, path.Base(name))
			continue
		}
		parts := strings.Split(name, "/")
		if strip >= len(parts) {
			continue
		}
		out = append(out, strings.Join(parts[strip:], "/"))
	}
	return dedupe(out)
}

// tar -x extracts into its -C directory (or the cwd): the named members
// there, or the whole directory when none is named; tar -c/-r/-u writes
// its -f archive.
func (w *shellWalker) tar(args []word, st dirState) {
	const valueLetters = "fCbKNTXgHVLI"
	var extract, create, stdout bool
	var dir, file *word
	var members []word
	take := func(letter byte, v word) {
		switch letter {
		case 'f':
			file = &v
		case 'C':
			dir = &v
		}
	}
	letters := func(s string, i *int, attached bool) {
		for j := 0; j < len(s); j++ {
			c := s[j]
			switch c {
			case 'x':
				extract = true
			case 'c', 'r', 'u', 'A':
				create = true
			case 'O':
				stdout = true
			}
			if strings.IndexByte(valueLetters, c) >= 0 {
				if attached && j+1 < len(s) {
					take(c, withText(args[*i], s[j+1:]))
					return
				}
				if *i+1 < len(args) {
					*i++
					take(c, args[*i])
				}
				if attached {
					return
				}
			}
		}
	}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case i == 0 && !strings.HasPrefix(t, "-") && !args[i].unknown:
			letters(t, &i, false) // old style: "xzf file"
		case t == "--":
			members = append(members, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(t, "--"):
			n, v, hasEq := strings.Cut(t[2:], "=")
			switch n {
			case "extract", "get":
				extract = true
			case "create", "append", "update", "concatenate", "catenate":
				create = true
			case "to-stdout", "to-command":
				stdout = true
			case "directory", "file":
				vw := withText(args[i], v)
				if !hasEq && i+1 < len(args) {
					i++
					vw = args[i]
				}
				if n == "directory" {
					dir = &vw
				} else {
					file = &vw
				}
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			letters(t[1:], &i, true)
		default:
			members = append(members, args[i])
		}
	}
	switch {
	case create && file != nil && file.text != "-":
		w.addWord(*file, st)
	case extract && !stdout:
		if dir != nil {
			applyChdir(&st, *dir, false)
			if dir.unknown {
				w.unknownWrite("tar -C names a directory acc cannot know", st, dir.hints)
				return
			}
		}
		if len(members) == 0 {
			w.add(".", st)
			return
		}
		w.addAll(members, st)
	}
}

// unzip extracts into its -d directory (or the cwd): the named members
// there, or the whole directory when none is named; listing, testing and
// printing (-l -t -v -Z -p -c -z) write nothing.
func (w *shellWalker) unzip(args []word, st dirState) {
	var dir *word
	var ops []word
	excluding := false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if strings.HasPrefix(t, "-") && len(t) > 1 && !args[i].unknown {
			excluding = false
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'l', 't', 'v', 'Z', 'p', 'c', 'z':
					return
				case 'x':
					excluding = true
				case 'd', 'P':
					v := withText(args[i], t[j+1:])
					if j+1 == len(t) && i+1 < len(args) {
						i++
						v = args[i]
					}
					if t[j] == 'd' {
						dir = &v
					}
					j = len(t)
				}
			}
			continue
		}
		if !excluding {
			ops = append(ops, args[i])
		}
	}
	if len(ops) == 0 {
		return
	}
	if dir != nil {
		applyChdir(&st, *dir, false)
		if dir.unknown {
			w.unknownWrite("unzip -d names a directory acc cannot know", st, dir.hints)
			return
		}
	}
	if len(ops) == 1 {
		w.add(".", st)
		return
	}
	w.addAll(ops[1:], st)
}

// inlineCode records the code an interpreter is given inline (python -c,
// node -e, perl -e, ruby -e, php -r, deno eval, bun -e) or on its input
// from a heredoc as an unknown write whose hints are the code's path-like
// tokens; it reports false for a program that is no such interpreter. A
// script file, or a module run with -m, is a program acc cannot look into:
// no hint source.
func (w *shellWalker) inlineCode(name string, args []word, redirs []*syntax.Redirect, st dirState) bool {
	var codeFlags, valueFlags string // short options giving code, and other short options taking a value
	var longCode []string
	switch {
	case isPython(name):
		codeFlags, valueFlags = "c", "mWX"
	case name == "node" || name == "nodejs":
		codeFlags, valueFlags, longCode = "ep", "r", []string{"eval", "print"}
	case name == "perl":
		codeFlags, valueFlags = "eE", "IMmx"
	case name == "ruby":
		codeFlags, valueFlags = "e", "rICEFx"
	case name == "php":
		codeFlags, valueFlags = "r", "cdz"
	case name == "bun":
		codeFlags, longCode = "e", []string{"eval", "print"}
	case name == "deno":
		if len(args) > 1 && args[0].text == "eval" {
			w.code(name+" eval runs code acc cannot read", args[1:], st)
		}
		return true
	default:
		return false
	}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" || t == "-" || !strings.HasPrefix(t, "-") || args[i].unknown {
			if t == "-" || t == "--" && i+1 >= len(args) {
				break // the code comes on the input
			}
			return true // a script file: acc cannot look into it
		}
		if long, ok := strings.CutPrefix(t, "--"); ok {
			n, v, hasEq := strings.Cut(long, "=")
			if contains(longCode, n) {
				code := []word{withText(args[i], v)}
				if !hasEq && i+1 < len(args) {
					code = args[i+1 : i+2]
				}
				w.code(name+" --"+n+" runs code acc cannot read", code, st)
				return true
			}
			continue
		}
		s := t[1:]
		for j := 0; j < len(s); j++ {
			c := s[j]
			if isPython(name) && c == 'm' {
				// A module: a program acc cannot look into, unless it is
				// a formatter of the table run as a module.
				mod := withText(args[i], s[j+1:])
				if j+1 == len(s) && i+1 < len(args) {
					i++
					mod = args[i]
				}
				if contains([]string{"black", "isort", "autopep8", "ruff"}, mod.text) {
					w.prog = mod.text
					w.readWriter(mod.text, args[i+1:], redirs, st, 0)
				}
				return true
			}
			if strings.IndexByte(codeFlags, c) >= 0 {
				code := []word{withText(args[i], s[j+1:])}
				if j+1 == len(s) && i+1 < len(args) {
					code = args[i+1 : i+2]
				}
				w.code(name+" -"+string(c)+" runs code acc cannot read", code, st)
				return true
			}
			if strings.IndexByte(valueFlags, c) >= 0 {
				if j+1 == len(s) {
					i++
				}
				break
			}
		}
	}
	// No script named: the code comes on the input.
	for _, r := range redirs {
		switch {
		case r.Hdoc != nil:
			w.code(name+" runs code from a heredoc acc cannot read", []word{w.word(r.Hdoc)}, st)
			return true
		case r.Op == syntax.WordHdoc:
			w.code(name+" runs code from a here-string acc cannot read", []word{w.word(r.Word)}, st)
			return true
		case r.Op == syntax.RdrIn:
			return true // a script file
		}
	}
	if len(w.pipeHints) > 0 {
		w.unknownWrite(name+" runs code from its input, which acc cannot see", st, w.pipeHints)
	}
	return true
}

// code records inline code as an unknown write.
func (w *shellWalker) code(why string, code []word, st dirState) {
	w.unknownCode(why, code, st)
}

func isPython(name string) bool {
	rest, ok := strings.CutPrefix(name, "python")
	return ok && strings.Trim(rest, "0123456789.") == ""
}
