package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acc-go/acc/pkg/workspace"
)

// GitEffect is what one git command would do to a worktree's files
// (docs/hooks.md#git-commands-the-guard-looks-into).
type GitEffect struct {
	// Worktree is the absolute top of the worktree git runs in (symlinks
	// resolved); outside any repository (only `git apply` writes there) it
	// is the directory git runs in.
	Worktree string
	// Paths are the absolute paths the command would change, delete,
	// create, or sweep into a commit, sorted and unique. A path that is a
	// directory (git clean -d, git worktree remove, git mv of a folder)
	// stands for everything beneath it; the files found beneath it are
	// listed too, up to gitWalkLimit. Empty with Unknown "" means the
	// command would touch nothing right now.
	Paths []string
	// Sweeps is true when the command changes no file but records
	// uncommitted edits into the index or a commit (commit, add).
	Sweeps bool
	// Unknown is non-empty when the full set cannot be known (the network,
	// standard input, a name that does not resolve, the budget): plain words
	// saying why and what to run instead. Paths then holds what is known.
	Unknown string
	// Clear is a command that does the same while staying clear of other
	// paths: a template in which {paths} is replaced by the allowed paths,
	// each shell-quoted (absolute, or relative to the directory git runs
	// in). "" when there is none (switching branches, merging).
	Clear string
}

const (
	// gitTouchMaxRuns bounds the git processes one GitTouched call starts.
	gitTouchMaxRuns = 8
	// gitWalkLimit bounds the files listed beneath a directory that a
	// command removes whole.
	gitWalkLimit = 5000
	// gitOutputLimit bounds what one git process may print (bytes).
	gitOutputLimit = 32 << 20
	gitAliasDepth  = 3
)

// errGitBudget reports that ctx expired while git was asked.
var errGitBudget = errors.New("git analysis: the hook's budget ran out")

// gitUnknown carries the words for GitEffect.Unknown.
type gitUnknown string

// errTooManyRuns is the Unknown for a command that needs more than
// gitTouchMaxRuns git processes; callers that read a git failure as an
// answer ("not a revision") pass it on instead.
const errTooManyRuns = gitUnknown("this git command needs more look-ups than the guard allows in one hook; name the paths explicitly")

// answered reports whether err is git's own failure, which the caller may
// read as an answer, rather than the budget or the process bound.
func answered(err error) bool {
	var u gitUnknown
	return errors.As(err, &u) && u != errTooManyRuns
}

func (u gitUnknown) Error() string { return string(u) }

// gitReadOnly lists subcommands that change no working-tree file.
var gitReadOnly = map[string]bool{
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
	"fast-export": true, "submodule": true, "difftool": true, "shortstat": true, "mailinfo": true,
	"get-tar-commit-id": true, "patch-id": true, "unpack-objects": true, "index-pack": true,
	"pack-objects": true, "prune-packed": true, "multi-pack-index": true, "commit-graph": true,
}

// GitTouched computes what `git <args…>` run in dir (absolute) would do to
// the files of dir's worktree: args are git's arguments after its global
// options, subcommand first, already expanded by the shell.
//
// It runs only read-only git (status, diff, show, stash show, clean -n,
// apply --numstat, rev-parse, ls-files, for-each-ref, config --get), with
// --no-optional-locks and GIT_OPTIONAL_LOCKS=0 so the index is never
// rewritten, without the caller's GIT_* variables, at most gitTouchMaxRuns
// processes, each bounded by ctx. It returns (nil, nil) for a subcommand
// that changes no working-tree file (status, log, diff, branch, checkout -b
// NEW without a start point, …) and for any subcommand but apply outside a
// Git worktree (git refuses there). Anything git cannot answer becomes
// Unknown. The only error is ctx's expiry, returned together with an effect
// whose Unknown says the budget ran out. The rules per subcommand are in
// docs/hooks.md#git-commands-the-guard-looks-into.
func GitTouched(ctx context.Context, dir string, args []string) (*GitEffect, error) {
	return gitTouched(ctx, dir, args, 0, 0)
}

// gitTouched follows aliases up to gitAliasDepth deep; runs counts the git
// processes already started for this call.
func gitTouched(ctx context.Context, dir string, args []string, depth, runs int) (*GitEffect, error) {
	if len(args) == 0 || gitReadOnly[args[0]] {
		return nil, nil
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	g := &gitProbe{ctx: ctx, dir: dir, env: append(workspace.GitEnv(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "LANGUAGE=C", "GIT_TERMINAL_PROMPT=0"), runs: runs}
	top, err := g.worktreeTop()
	if err != nil {
		return g.finish(&GitEffect{Worktree: dir}, err)
	}
	sub, rest := args[0], args[1:]
	if top == "" {
		if sub != "apply" {
			return nil, nil
		}
		top = dir
		g.outside = true
	}
	g.top = top
	e := &GitEffect{Worktree: top}
	var h func(*gitProbe, *GitEffect, []string) error
	switch sub {
	case "stash":
		h = gitStash
	case "reset":
		h = gitReset
	case "checkout":
		h = gitCheckout
	case "switch":
		h = gitSwitch
	case "restore":
		h = gitRestore
	case "clean":
		h = gitClean
	case "apply":
		h = gitApply
	case "am":
		h = gitAm
	case "merge":
		h = gitMerge
	case "rebase":
		h = gitRebase
	case "cherry-pick", "revert":
		h = func(g *gitProbe, e *GitEffect, a []string) error { return gitPick(g, e, sub, a) }
	case "pull":
		h = gitPull
	case "commit":
		h = gitCommit
	case "add", "stage":
		h = gitAdd
	case "rm":
		h = gitRm
	case "mv":
		h = gitMv
	case "worktree":
		h = gitWorktree
	case "bisect":
		h = gitBisect
	case "sparse-checkout":
		h = func(g *gitProbe, e *GitEffect, a []string) error {
			if len(a) > 0 && a[0] == "list" {
				return errNoEffect
			}
			return gitUnknown("`git sparse-checkout` adds and removes files by patterns acc does not evaluate; run `git sparse-checkout list` and change the patterns when no peer holds the paths they cover")
		}
	case "read-tree", "checkout-index", "merge-file", "mergetool", "filter-branch", "lfs", "archive", "bundle":
		h = func(g *gitProbe, e *GitEffect, a []string) error { return gitOther(g, e, sub, a) }
	default:
		if depth >= gitAliasDepth {
			return g.finish(e, gitUnknown(fmt.Sprintf("`git %s` is an alias acc could not follow to a known command", sub)))
		}
		alias, err := g.run("config", "--get", "alias."+sub)
		if err != nil {
			if answered(err) {
				return g.finish(e, gitUnknown(fmt.Sprintf("acc does not know what `git %s` changes in the working tree; use the plain git commands it stands for", sub)))
			}
			return g.finish(e, err)
		}
		a := strings.TrimSpace(string(alias))
		if strings.HasPrefix(a, "!") {
			return g.finish(e, gitUnknown(fmt.Sprintf("`git %s` is a shell alias acc cannot look into; run the git commands it stands for one by one", sub)))
		}
		return gitTouched(ctx, dir, append(strings.Fields(a), rest...), depth+1, g.runs)
	}
	err = h(g, e, rest)
	if errors.Is(err, errNoEffect) {
		return nil, nil
	}
	return g.finish(e, err)
}

// errNoEffect tells gitTouched that the command changes no file.
var errNoEffect = errors.New("no effect on the working tree")

// gitProbe runs read-only git for one GitTouched call.
type gitProbe struct {
	ctx     context.Context
	dir     string // where the command runs (symlinks resolved)
	top     string // its worktree top, or dir outside a repository
	outside bool
	env     []string
	runs    int
	paths   map[string]bool
}

// finish sorts e's paths and turns err into Unknown (or the budget error).
func (g *gitProbe) finish(e *GitEffect, err error) (*GitEffect, error) {
	for p := range g.paths {
		e.Paths = append(e.Paths, p)
	}
	slices.Sort(e.Paths)
	var u gitUnknown
	switch {
	case err == nil:
	case errors.Is(err, errGitBudget) || g.ctx.Err() != nil:
		e.Unknown = "working out what this git command would change took longer than the hook's budget; name the paths explicitly (e.g. `git stash push -- <paths>`, `git commit -- <paths>`)"
		return e, errGitBudget
	case errors.As(err, &u):
		e.Unknown = string(u)
	default:
		e.Unknown = err.Error()
	}
	return e, nil
}

// add records rel (relative to base, or absolute) as touched.
func (g *gitProbe) add(base string, rel ...string) {
	if g.paths == nil {
		g.paths = map[string]bool{}
	}
	for _, r := range rel {
		if r == "" {
			continue
		}
		if !filepath.IsAbs(r) {
			r = filepath.Join(base, r)
		}
		g.paths[filepath.Clean(r)] = true
	}
}

// run starts `git --no-optional-locks -C dir args…` and returns its stdout.
// A git failure is a gitUnknown naming the command; ctx expiry is
// errGitBudget.
func (g *gitProbe) run(args ...string) ([]byte, error) {
	if g.ctx.Err() != nil {
		return nil, errGitBudget
	}
	if g.runs >= gitTouchMaxRuns {
		return nil, errTooManyRuns
	}
	g.runs++
	full := append([]string{"--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.quotePath=true", "-C", g.dir}, args...)
	cmd := exec.CommandContext(g.ctx, "git", full...)
	cmd.Env = g.env
	var out, stderr limitedBuffer
	out.limit, stderr.limit = gitOutputLimit, 4096
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if g.ctx.Err() != nil {
		return nil, errGitBudget
	}
	if out.over {
		return nil, gitUnknown(fmt.Sprintf("`git %s` printed more than acc reads in a hook; name the paths explicitly", args[0]))
	}
	if err != nil {
		msg := strings.TrimSpace(strings.SplitN(stderr.String(), "\n", 2)[0])
		if msg == "" {
			msg = err.Error()
		}
		// One line naming only the subcommand: the arguments may hold any
		// byte, and this text can reach a deny reason.
		return out.Bytes(), gitUnknown(fmt.Sprintf("`git %s` could not answer (%s)", args[0], strings.ToValidUTF8(msg, "?")))
	}
	return out.Bytes(), nil
}

type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		b.over = true
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// worktreeTop finds dir's worktree top from the repository's files, else by
// asking git; "" when dir is in no worktree (a plain directory, a bare
// repository, inside a gitdir).
func (g *gitProbe) worktreeTop() (string, error) {
	if info, ok := workspace.GitFromFiles(g.dir); ok {
		if info == nil {
			return "", nil
		}
		return info.WorktreeRoot, nil
	}
	out, err := g.run("rev-parse", "--show-toplevel")
	if err != nil {
		if errors.Is(err, errGitBudget) {
			return "", err
		}
		return "", nil
	}
	top := strings.TrimSuffix(string(out), "\n")
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	if !filepath.IsAbs(top) {
		return "", nil
	}
	return top, nil
}

// names runs git and adds every NUL-separated path it prints, relative to
// the worktree top.
func (g *gitProbe) names(args ...string) error {
	out, err := g.run(args...)
	if err != nil {
		return err
	}
	g.add(g.top, splitNUL(out)...)
	return nil
}

// Comparing with the working tree, `git diff` refreshes the index and
// writes it back whatever GIT_OPTIONAL_LOCKS says, so the working tree is
// read through `git status` (which refreshes in memory only) and trees
// through plumbing, which never touches the index.

// optionLike refuses a revision that git would read as an option (a value
// such as `--source=--output=f` must not turn a read into a write).
func optionLike(revs ...string) error {
	for _, r := range revs {
		if strings.HasPrefix(r, "-") {
			return gitUnknown(fmt.Sprintf("%s is not a revision acc can look up; name a branch or commit", textq(r)))
		}
	}
	return nil
}

// treeDiff adds the files that differ between two commits or trees; a
// "A...B" form compares B with the merge base of A and B.
func (g *gitProbe) treeDiff(a, b string) error {
	if err := optionLike(a, b); err != nil {
		return err
	}
	if b == "" {
		return g.names("diff", "--no-ext-diff", "--no-relative", "--name-only", "-z", "--no-renames", "--ignore-submodules=all", a, "--")
	}
	return g.names("diff-tree", "-r", "-z", "--name-only", "--no-renames", "--no-commit-id", "--ignore-submodules=all", a, b, "--")
}

// worktreeVsIndex adds the tracked files under spec whose working copy
// differs from the index (deleted ones and conflicts included).
func (g *gitProbe) worktreeVsIndex(spec []string) error {
	es, err := g.status("no", false, spec)
	if err != nil {
		return err
	}
	for _, s := range es {
		if s.unstaged() || s.x == 'U' {
			g.add(g.top, s.path)
		}
	}
	return nil
}

// worktreeVs adds the files under spec whose working copy may differ from
// rev: those that differ from the index, and those in which the index
// differs from rev (a superset: a staged change undone in the working copy
// still counts).
func (g *gitProbe) worktreeVs(rev string, spec []string) error {
	if err := optionLike(rev); err != nil {
		return err
	}
	if err := g.worktreeVsIndex(spec); err != nil {
		return err
	}
	return g.names(append([]string{"diff-index", "--cached", "-z", "--name-only", "--no-renames", "--ignore-submodules=all", rev, "--"}, spec...)...)
}

func splitNUL(b []byte) []string {
	var out []string
	for _, s := range strings.Split(string(b), "\x00") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// statusEntry is one record of `git status --porcelain=v1 -z`: XY and the
// path relative to the worktree top.
type statusEntry struct {
	x, y byte
	path string
}

func (s statusEntry) staged() bool    { return s.x != ' ' && s.x != '?' && s.x != '!' }
func (s statusEntry) unstaged() bool  { return s.y != ' ' && s.x != '?' && s.x != '!' }
func (s statusEntry) untracked() bool { return s.x == '?' }
func (s statusEntry) ignored() bool   { return s.x == '!' }

// status lists changes under pathspec; untracked "no" or "all"; ignored
// adds ignored files.
func (g *gitProbe) status(untracked string, ignored bool, pathspec []string) ([]statusEntry, error) {
	args := []string{"status", "--porcelain=v1", "-z", "--no-renames", "--ignore-submodules=all", "--untracked-files=" + untracked}
	if ignored {
		args = append(args, "--ignored=matching")
	}
	args = append(args, "--")
	args = append(args, pathspec...)
	out, err := g.run(args...)
	if err != nil {
		return nil, err
	}
	var es []statusEntry
	for _, rec := range splitNUL(out) {
		if len(rec) < 4 || rec[2] != ' ' {
			continue
		}
		es = append(es, statusEntry{x: rec[0], y: rec[1], path: rec[3:]})
	}
	return es, nil
}

// gitArgs is a parsed argument list: options (by name, each occurrence's
// value), positionals before `--`, and those after it.
type gitArgs struct {
	opts     map[string][]string
	pos      []string
	after    []string
	dashdash bool
}

func (a gitArgs) has(names ...string) bool {
	for _, n := range names {
		if _, ok := a.opts[n]; ok {
			return true
		}
	}
	return false
}

func (a gitArgs) val(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := a.opts[n]; ok && len(v) > 0 {
			return v[len(v)-1], true
		}
	}
	return "", false
}

func (a gitArgs) pathspec() []string { return append(slices.Clone(a.pos), a.after...) }

// parseGitArgs splits args the way git's option parser does: shortVal
// lists the short options that take a value (attached or next), and after
// a '?' those whose value is optional and only attached (-S<key>); longVal
// lists the long ones (`--x=v` or `--x v`); other `--x=v` keep their value.
func parseGitArgs(args []string, shortVal string, longVal ...string) gitArgs {
	a := gitArgs{opts: map[string][]string{}}
	shortVal, shortOpt, _ := strings.Cut(shortVal, "?")
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--":
			a.dashdash = true
			a.after = append(a.after, args[i+1:]...)
			return a
		case s == "--end-of-options":
			a.pos = append(a.pos, args[i+1:]...)
			return a
		case strings.HasPrefix(s, "--"):
			name, v, hasV := strings.Cut(s, "=")
			if !hasV && slices.Contains(longVal, name) && i+1 < len(args) {
				i++
				v = args[i]
			}
			a.opts[name] = append(a.opts[name], v)
		case strings.HasPrefix(s, "-") && len(s) > 1:
			for j := 1; j < len(s); j++ {
				name := "-" + string(s[j])
				if strings.IndexByte(shortOpt, s[j]) >= 0 {
					a.opts[name] = append(a.opts[name], s[j+1:])
					break
				}
				if strings.IndexByte(shortVal, s[j]) >= 0 {
					v := s[j+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					a.opts[name] = append(a.opts[name], v)
					break
				}
				a.opts[name] = append(a.opts[name], "")
			}
		default:
			a.pos = append(a.pos, s)
		}
	}
	return a
}

// shq quotes s for a POSIX shell when it needs quoting.
func shq(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=+,%^~", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// textq quotes s for a message: as for the shell, but in Go's escaped
// form when it holds a control character or invalid UTF-8, so the message
// stays one readable line.
func textq(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return shq(s)
}

// verifyRev resolves rev^{kind} without printing anything on failure.
func (g *gitProbe) verifyRev(rev, kind string) (bool, error) {
	if err := optionLike(rev); err != nil {
		return false, err
	}
	_, err := g.run("rev-parse", "--verify", "-q", "--end-of-options", rev+"^{"+kind+"}")
	if answered(err) {
		return false, nil
	}
	return err == nil, err
}

func notARev(cmd, rev string) gitUnknown {
	return gitUnknown(fmt.Sprintf("`%s` names %s, which does not resolve to a commit here, so acc cannot tell which files it would change; check the name with `git rev-parse --verify %s`", cmd, textq(rev), textq(rev)))
}

// gitStash: push/save (the default) stash the tracked files with changes
// against HEAD (staged or not) within the pathspec, plus untracked files
// with -u and ignored ones with -a; pop/apply/branch write the files the
// stash entry recorded.
func gitStash(g *gitProbe, e *GitEffect, args []string) error {
	sub := "push"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "push", "save":
		a := parseGitArgs(args, "m", "--message", "--pathspec-from-file")
		if a.has("--pathspec-from-file") {
			return gitUnknown("`git stash push --pathspec-from-file` reads its paths from a file acc does not read; name the paths: `git stash push -- <paths>`")
		}
		var spec []string
		if sub == "push" {
			spec = a.pathspec()
		}
		all := a.has("-a", "--all")
		untracked := all || a.has("-u", "--include-untracked")
		staged := a.has("-S", "--staged")
		mode := "no"
		if untracked {
			mode = "all"
		}
		es, err := g.status(mode, all, spec)
		if err != nil {
			return err
		}
		for _, s := range es {
			if (staged && s.staged()) || (!staged && (s.staged() || s.unstaged())) ||
				(untracked && !staged && s.untracked()) || (all && !staged && s.ignored()) {
				g.add(g.top, s.path)
			}
		}
		e.Clear = "git stash push"
		switch {
		case all:
			e.Clear += " --all"
		case untracked:
			e.Clear += " --include-untracked"
		case staged:
			e.Clear += " --staged"
		}
		e.Clear += " -- {paths}"
		return nil
	case "pop", "apply", "branch":
		a := parseGitArgs(args, "")
		ref := "stash@{0}"
		pos := a.pos
		if sub == "branch" {
			if len(pos) == 0 {
				return errNoEffect
			}
			pos = pos[1:]
		}
		if len(pos) > 0 {
			ref = pos[0]
			if _, err := strconv.Atoi(ref); err == nil {
				ref = "stash@{" + ref + "}"
			}
		}
		if err := optionLike(ref); err != nil {
			return err
		}
		out, err := g.run("stash", "show", "--no-ext-diff", "--name-only", "-z", "--no-renames", "--include-untracked", ref)
		if err != nil {
			if answered(err) {
				return gitUnknown(fmt.Sprintf("`git stash %s` names %s, which acc cannot read as a stash entry; check `git stash list`", sub, textq(ref)))
			}
			return err
		}
		g.add(g.top, splitNUL(out)...)
		if sub == "branch" {
			return g.treeDiff("HEAD", ref+"^1")
		}
		return nil
	default:
		return errNoEffect
	}
}

// gitReset: --hard, --merge and --keep rewrite every tracked file whose
// working copy differs from the target commit (local edits, and files the
// two commits differ in); the other modes change no file.
func gitReset(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "", "--pathspec-from-file")
	if !a.has("--hard", "--merge", "--keep") || len(a.after) > 0 || len(a.pos) > 1 {
		return errNoEffect
	}
	target := "HEAD"
	if len(a.pos) == 1 {
		target = a.pos[0]
	}
	if ok, err := g.verifyRev(target, "commit"); err != nil {
		return err
	} else if !ok {
		return notARev("git reset", target)
	}
	if err := g.worktreeVs(target, nil); err != nil {
		return err
	}
	if target == "HEAD" {
		e.Clear = "git restore --source=HEAD --staged --worktree -- {paths}"
	}
	return nil
}

// gitCheckout decides, as git does, between switching to a branch or
// commit (the files that differ between HEAD and it, and with -f the local
// edits too) and restoring paths (the files under them whose working copy
// differs from the index, or from the named tree-ish).
func gitCheckout(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "bB", "--orphan", "--pathspec-from-file", "--conflict")
	if a.has("--pathspec-from-file") {
		return gitUnknown("`git checkout --pathspec-from-file` reads its paths from a file acc does not read; name the paths: `git checkout -- <paths>`")
	}
	newBranch := a.has("-b", "-B", "--orphan")
	force := a.has("-f", "--force")
	pos := a.pos
	if len(pos) > 0 && pos[0] == "-" {
		pos[0] = "@{-1}"
	}
	if a.dashdash {
		switch len(pos) {
		case 0:
			return checkoutPaths(g, e, "", a.after)
		case 1:
			return checkoutPaths(g, e, pos[0], a.after)
		default:
			return errNoEffect // git refuses
		}
	}
	if len(pos) == 0 {
		switch {
		case a.has("-p", "--patch"):
			return checkoutPaths(g, e, "", []string{":/"}) // -p alone offers every change
		case force && !newBranch:
			return switchTo(g, "HEAD", true) // checkout -f alone throws the local edits away
		}
		return errNoEffect
	}
	kind := "commit"
	if len(pos) > 1 {
		kind = "tree"
	}
	isRev, err := g.verifyRev(pos[0], kind)
	if err != nil {
		return err
	}
	switch {
	case isRev && len(pos) == 1:
		return switchTo(g, pos[0], force)
	case isRev:
		return checkoutPaths(g, e, pos[0], pos[1:])
	case newBranch:
		return errNoEffect // a start point that does not resolve: git refuses
	}
	if len(pos) == 1 {
		if _, err := os.Lstat(filepath.Join(g.dir, pos[0])); err != nil {
			remote, err := g.guessRemote(pos[0])
			if err != nil {
				return err
			}
			if remote != "" {
				return switchTo(g, remote, force)
			}
		}
	}
	return checkoutPaths(g, e, "", pos)
}

// guessRemote finds the one remote-tracking branch <remote>/name that
// `git checkout name` would create a branch from; "" when none or several.
func (g *gitProbe) guessRemote(name string) (string, error) {
	out, err := g.run("for-each-ref", "--format=%(refname)", "refs/remotes/")
	if answered(err) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	var found []string
	for _, r := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(r, "refs/remotes/")
		if _, branch, ok2 := strings.Cut(rest, "/"); ok && ok2 && branch == name {
			found = append(found, r)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return "", nil
}

func switchTo(g *gitProbe, target string, force bool) error {
	if force {
		return g.worktreeVs(target, nil)
	}
	err := g.treeDiff("HEAD", target)
	if answered(err) {
		// An unborn HEAD: every file of the target is written.
		return g.names("ls-tree", "-r", "-z", "--name-only", "--full-tree", target)
	}
	return err
}

func checkoutPaths(g *gitProbe, e *GitEffect, source string, spec []string) error {
	if len(spec) == 0 {
		return errNoEffect
	}
	if source == "" {
		e.Clear = "git checkout -- {paths}"
		return g.worktreeVsIndex(spec)
	}
	e.Clear = "git checkout " + shq(source) + " -- {paths}"
	return g.worktreeVs(source, spec)
}

// gitSwitch: like checkout of a branch; --orphan empties the tracked files.
func gitSwitch(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "cC", "--orphan", "--conflict")
	force := a.has("-f", "--force", "--discard-changes")
	pos := a.pos
	if len(pos) > 0 && pos[0] == "-" {
		pos[0] = "@{-1}"
	}
	if a.has("--orphan") {
		return g.names("ls-files", "-z", "--full-name", "--", ":/")
	}
	if len(pos) == 0 {
		return errNoEffect
	}
	target := pos[0]
	ok, err := g.verifyRev(target, "commit")
	if err != nil {
		return err
	}
	if !ok {
		if a.has("-c", "-C", "--no-guess") {
			return errNoEffect // git refuses
		}
		remote, err := g.guessRemote(target)
		if err != nil || remote == "" {
			return err
		}
		target = remote
	}
	return switchTo(g, target, force)
}

// gitRestore: the working-tree files under the paths that differ from the
// source (the index by default; HEAD with --staged --worktree).
func gitRestore(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "s", "--source", "--pathspec-from-file", "--conflict")
	if a.has("--pathspec-from-file") {
		return gitUnknown("`git restore --pathspec-from-file` reads its paths from a file acc does not read; name the paths: `git restore -- <paths>`")
	}
	staged := a.has("-S", "--staged")
	if staged && !a.has("-W", "--worktree") {
		return errNoEffect
	}
	spec := a.pathspec()
	if len(spec) == 0 && a.has("-p", "--patch") {
		spec = []string{":/"} // -p alone offers every change
	}
	if len(spec) == 0 {
		return errNoEffect
	}
	source, hasSource := a.val("-s", "--source")
	if !hasSource && staged {
		source = "HEAD"
	}
	e.Clear = "git restore"
	if hasSource {
		e.Clear += " --source=" + shq(source)
	}
	if staged {
		e.Clear += " --staged --worktree"
	}
	e.Clear += " -- {paths}"
	if source == "" {
		return g.worktreeVsIndex(spec)
	}
	return g.worktreeVs(source, spec)
}

// gitClean asks `git clean -n` with the same selection (-d, -x, -X, -e,
// pathspec): that dry run is what -f would remove.
func gitClean(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "e", "--exclude")
	if a.has("-n", "--dry-run") {
		return errNoEffect
	}
	dry := []string{"clean", "-n"}
	flags := ""
	for _, f := range []string{"-d", "-x", "-X"} {
		if a.has(f) {
			dry = append(dry, f)
			flags += " " + f
		}
	}
	if n := len(a.opts["-f"]) + len(a.opts["--force"]); n > 1 {
		dry = append(dry, "-f", "-f") // -ff also removes nested repositories; -n keeps it a dry run
		flags += " -f"
	}
	for _, x := range append(a.opts["-e"], a.opts["--exclude"]...) {
		dry = append(dry, "--exclude="+x)
		flags += " --exclude=" + shq(x)
	}
	dry = append(dry, "--")
	dry = append(dry, a.pathspec()...)
	out, err := g.run(dry...)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(out), "\n") {
		p, ok := strings.CutPrefix(line, "Would remove ")
		if !ok {
			continue
		}
		if strings.HasPrefix(p, `"`) {
			uq, err := strconv.Unquote(p)
			if err != nil {
				return gitUnknown("acc could not read a path in `git clean -n`; name the paths: `git clean -f -- <paths>`")
			}
			p = uq
		}
		if strings.HasSuffix(p, "/") {
			if err := g.addTree(filepath.Join(g.dir, p)); err != nil {
				return err
			}
			continue
		}
		g.add(g.dir, p)
	}
	e.Clear = "git clean -f" + flags + " -- {paths}"
	return nil
}

// addTree adds a directory and the files beneath it, up to gitWalkLimit.
func (g *gitProbe) addTree(dir string) error {
	g.add("", dir)
	n := 0
	errLimit := errors.New("limit")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if n++; n > gitWalkLimit {
			return errLimit
		}
		if g.ctx.Err() != nil {
			return errGitBudget
		}
		g.add("", p)
		return nil
	})
	if errors.Is(err, errGitBudget) {
		return err
	}
	return nil
}

// gitApply reads the patch files with git's own parser (`git apply
// --numstat -z`, which changes nothing): the files they create, change,
// delete or rename, both names of a rename.
func gitApply(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "pC", "--directory", "--include", "--exclude", "--whitespace", "--build-fake-ancestor")
	if a.has("--cached") {
		return errNoEffect
	}
	if a.has("--check", "--stat", "--numstat", "--summary") && !a.has("--apply") {
		return errNoEffect
	}
	return patchNames(g, "git apply", a)
}

// gitAm reads the patches in the mailbox files the same way.
func gitAm(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "pC?S", "--directory", "--include", "--exclude", "--whitespace", "--patch-format", "--resolvemsg")
	switch {
	case a.has("--quit", "--show-current-patch"):
		return errNoEffect
	case a.has("--continue", "-r", "--resolved", "--skip", "--abort"):
		return inProgress(g, "git am", "`git am --abort`")
	}
	return patchNames(g, "git am", a)
}

func patchNames(g *gitProbe, cmd string, a gitArgs) error {
	files := a.pathspec()
	if len(files) == 0 || slices.Contains(files, "-") {
		return gitUnknown(fmt.Sprintf("`%s` reads its patch from standard input, which acc cannot see; save it to a file and run `%s <file>`", cmd, cmd))
	}
	for _, f := range files {
		if !filepath.IsAbs(f) {
			f = filepath.Join(g.dir, f)
		}
		if fi, err := os.Stat(f); err == nil && fi.IsDir() {
			return gitUnknown(fmt.Sprintf("`%s` reads a maildir acc does not look into; run it on mailbox files", cmd))
		}
	}
	numstat := []string{"apply", "--numstat", "-z"}
	for _, o := range []string{"-p", "--directory", "--include", "--exclude"} {
		for _, v := range a.opts[o] {
			if o == "-p" {
				numstat = append(numstat, "-p"+v)
			} else {
				numstat = append(numstat, o+"="+v)
			}
		}
	}
	if a.has("--unsafe-paths") {
		numstat = append(numstat, "--unsafe-paths")
	}
	// git names only the new side of a rename; read the patch reversed
	// too, for the old side.
	for _, reverse := range []bool{false, true} {
		args := slices.Clone(numstat)
		if reverse != a.has("-R", "--reverse") {
			args = append(args, "-R")
		}
		out, err := g.run(append(append(args, "--"), files...)...)
		if err != nil {
			return err
		}
		// Records: "added\tdeleted\tpath\0", or for a rename that git
		// spells out "added\tdeleted\t\0old\0new\0".
		toks := strings.Split(string(out), "\x00")
		for i := 0; i < len(toks); i++ {
			parts := strings.SplitN(toks[i], "\t", 3)
			if len(parts) != 3 {
				continue
			}
			if parts[2] != "" {
				g.add(g.top, parts[2])
				continue
			}
			if i+2 < len(toks) {
				g.add(g.top, toks[i+1], toks[i+2])
				i += 2
			}
		}
	}
	return nil
}

// inProgress is for --continue/--skip/--abort of a sequence: the files
// already changed against HEAD (conflicts included) are known, the rest of
// the sequence is not.
func inProgress(g *gitProbe, cmd, abort string) error {
	if err := g.worktreeVs("HEAD", nil); err != nil {
		return err
	}
	return gitUnknown(fmt.Sprintf("`%s` goes on with an operation in progress whose remaining steps acc does not read; `git status` shows where it stands, and %s returns to where it began", cmd, abort))
}

// gitMerge: the files the other side changed since the merge base
// (`git diff HEAD...X`), which is what a merge writes.
func gitMerge(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "mFsX?S", "--strategy", "--strategy-option", "--cleanup", "--into-name", "--file", "--message")
	switch {
	case a.has("--quit"):
		return errNoEffect
	case a.has("--abort"):
		return g.worktreeVs("HEAD", nil) // it resets every file that differs from HEAD
	case a.has("--continue"):
		return gitCommit(g, e, nil)
	}
	commits := a.pos
	if len(commits) == 0 {
		commits = []string{"@{upstream}"}
	}
	for _, c := range commits {
		if ok, err := g.verifyRev(c, "commit"); err != nil {
			return err
		} else if !ok {
			return notARev("git merge", c)
		}
		if err := g.treeDiff("HEAD..."+c, ""); err != nil {
			return err
		}
	}
	return nil
}

// gitRebase: the working tree ends at the new base plus the replayed
// commits and passes through the base on the way, so every file whose
// working copy differs from the new base is written (and local edits, which
// rebase.autoStash stashes and puts back).
func gitRebase(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "sXxC?S", "--onto", "--strategy", "--strategy-option", "--exec", "--empty")
	switch {
	case a.has("--quit", "--edit-todo", "--show-current-patch"):
		return errNoEffect
	case a.has("--continue", "--skip", "--abort"):
		return inProgress(g, "git rebase", "`git rebase --abort`")
	case a.has("--root"):
		return gitUnknown("`git rebase --root` rewrites the whole history, which acc does not follow; rebase onto a named commit instead")
	}
	upstream := "@{upstream}"
	if len(a.pos) > 0 {
		upstream = a.pos[0]
	}
	onto, hasOnto := a.val("--onto")
	if !hasOnto {
		onto = upstream
	}
	for _, r := range []string{upstream, onto} {
		if ok, err := g.verifyRev(r, "commit"); err != nil {
			return err
		} else if !ok {
			return notARev("git rebase", r)
		}
	}
	if len(a.pos) > 1 {
		if err := g.treeDiff("HEAD", a.pos[1]); err != nil {
			return err
		}
	}
	return g.worktreeVs(onto, nil)
}

// gitPick: cherry-pick and revert write the files each named commit (or
// range) changes.
func gitPick(g *gitProbe, e *GitEffect, sub string, args []string) error {
	a := parseGitArgs(args, "mX?S", "--mainline", "--strategy", "--strategy-option", "--cleanup")
	switch {
	case a.has("--quit"):
		return errNoEffect
	case a.has("--continue", "--skip", "--abort"):
		return inProgress(g, "git "+sub, "`git "+sub+" --abort`")
	}
	if len(a.pos) == 0 {
		return errNoEffect
	}
	merges := "--diff-merges=first-parent"
	if a.has("-m", "--mainline") {
		merges = "--diff-merges=separate"
	}
	err := g.names(append([]string{"show", "--no-ext-diff", "--format=", "--name-only", "-z", "--no-renames", merges, "--end-of-options"}, append(a.pos, "--")...)...)
	if answered(err) {
		return gitUnknown(fmt.Sprintf("`git %s` names a commit that does not resolve here, so acc cannot tell which files it would change; check the names with `git log --oneline`", sub))
	}
	return err
}

// gitPull needs the network before anything is known.
func gitPull(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "")
	then := "`git merge --ff-only @{u}`"
	if a.has("-r", "--rebase") {
		then = "`git rebase @{u}`"
	}
	return gitUnknown("`git pull` fetches before it changes files, so what it would change is not known yet; run `git fetch`, then " + then + ", which acc can look into")
}

// gitCommit: what a commit sweeps in. Plain commit: the staged files; -a:
// every tracked file with changes; paths (--only): the changed files under
// them; -i paths: both.
func gitCommit(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "mFCct?Su", "--message", "--file", "--reuse-message", "--reedit-message",
		"--fixup", "--squash", "--author", "--date", "--template", "--cleanup", "--pathspec-from-file", "--trailer")
	if a.has("--dry-run") {
		return errNoEffect
	}
	e.Sweeps = true
	e.Clear = "git commit -- {paths}"
	if a.has("--pathspec-from-file") {
		return gitUnknown("`git commit --pathspec-from-file` reads its paths from a file acc does not read; name the paths: `git commit -- <paths>`")
	}
	spec := a.pathspec()
	all := a.has("-a", "--all", "-p", "--patch")
	if len(spec) == 0 || all || a.has("-i", "--include") {
		es, err := g.status("no", false, nil)
		if err != nil {
			return err
		}
		for _, s := range es {
			if s.staged() || (all && s.unstaged()) {
				g.add(g.top, s.path)
			}
		}
	}
	if len(spec) > 0 {
		es, err := g.status("no", false, spec)
		if err != nil {
			return err
		}
		for _, s := range es {
			if s.staged() || s.unstaged() {
				g.add(g.top, s.path)
			}
		}
	}
	return nil
}

// gitAdd: the files whose working copy differs from the index under the
// pathspec (the whole tree for -A/-u without one), untracked ones too
// unless -u.
func gitAdd(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "", "--chmod", "--pathspec-from-file")
	if a.has("-n", "--dry-run", "--refresh") {
		return errNoEffect
	}
	if a.has("--pathspec-from-file") {
		return gitUnknown("`git add --pathspec-from-file` reads its paths from a file acc does not read; name the paths: `git add -- <paths>`")
	}
	spec := a.pathspec()
	// -p and -i offer the tracked files' changes, as -u stages them (the
	// answers may come on the input: `yes | git add -p`).
	update := a.has("-u", "--update", "-p", "--patch", "-i", "--interactive")
	if len(spec) == 0 {
		if !update && !a.has("-A", "--all") {
			return errNoEffect
		}
		spec = []string{":/"}
	}
	e.Sweeps = true
	e.Clear = "git add -- {paths}"
	mode := "all"
	if update {
		mode = "no"
	}
	force := a.has("-f", "--force")
	es, err := g.status(mode, force, spec)
	if err != nil {
		return err
	}
	for _, s := range es {
		if s.unstaged() || s.untracked() || (force && s.ignored()) {
			g.add(g.top, s.path)
		}
	}
	return nil
}

// gitRm deletes the tracked files under the pathspec (not with --cached).
func gitRm(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "", "--pathspec-from-file")
	if a.has("--cached", "-n", "--dry-run") {
		return errNoEffect
	}
	if a.has("--pathspec-from-file") {
		return gitUnknown("`git rm --pathspec-from-file` reads its paths from a file acc does not read; name the paths: `git rm -- <paths>`")
	}
	spec := a.pathspec()
	if len(spec) == 0 {
		return errNoEffect
	}
	e.Clear = "git rm -- {paths}"
	return g.names(append([]string{"ls-files", "-z", "--full-name", "--"}, spec...)...)
}

// gitMv moves the tracked files under each source to the destination.
func gitMv(g *gitProbe, e *GitEffect, args []string) error {
	a := parseGitArgs(args, "")
	if a.has("-n", "--dry-run") {
		return errNoEffect
	}
	all := a.pathspec()
	if len(all) < 2 {
		return errNoEffect
	}
	srcs, dst := all[:len(all)-1], all[len(all)-1]
	g.add(g.dir, dst)
	if fi, err := os.Stat(filepath.Join(g.dir, dst)); err == nil && fi.IsDir() {
		for _, s := range srcs {
			g.add(g.dir, filepath.Join(dst, filepath.Base(s)))
		}
	}
	g.add(g.dir, srcs...)
	return g.names(append([]string{"ls-files", "-z", "--full-name", "--"}, srcs...)...)
}

// gitWorktree: remove deletes a worktree's directory, move moves it.
func gitWorktree(g *gitProbe, e *GitEffect, args []string) error {
	if len(args) == 0 {
		return errNoEffect
	}
	a := parseGitArgs(args[1:], "")
	switch args[0] {
	case "remove", "move":
		if len(a.pos) == 0 {
			return errNoEffect
		}
		p := a.pos[0]
		if !filepath.IsAbs(p) {
			p = filepath.Join(g.dir, p)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		e.Worktree = p
		return g.addTree(p)
	}
	return errNoEffect
}

// gitBisect checks out commits it chooses as it goes.
func gitBisect(g *gitProbe, e *GitEffect, args []string) error {
	if len(args) > 0 && slices.Contains([]string{"log", "visualize", "view", "terms", "help"}, args[0]) {
		return errNoEffect
	}
	return gitUnknown("`git bisect` checks out commits it chooses as it goes, which acc cannot tell in advance; bisect in a worktree of your own (`git worktree add`)")
}

// gitOther covers the rarer commands that write files.
func gitOther(g *gitProbe, e *GitEffect, sub string, args []string) error {
	switch sub {
	case "merge-file":
		a := parseGitArgs(args, "L", "--marker-size")
		if a.has("-p", "--stdout") || len(a.pos) == 0 {
			return errNoEffect
		}
		g.add(g.dir, a.pos[0])
		return nil
	case "archive":
		a := parseGitArgs(args, "o", "--output", "--format", "--prefix", "--remote", "--exec")
		if o, ok := a.val("-o", "--output"); ok {
			g.add(g.dir, o)
			return nil
		}
		return errNoEffect
	case "bundle":
		if len(args) > 1 && args[0] == "create" {
			a := parseGitArgs(args[1:], "")
			if len(a.pos) > 0 {
				g.add(g.dir, a.pos[0])
				return nil
			}
		}
		return errNoEffect
	case "read-tree":
		update := false
		for _, a := range args {
			if a == "--" {
				break
			}
			// -u alone or in a cluster such as -mu.
			update = update || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'u')
		}
		if !update {
			return errNoEffect
		}
	case "lfs":
		if len(args) == 0 || !slices.Contains([]string{"pull", "checkout", "fetch", "migrate"}, args[0]) || args[0] == "fetch" {
			return errNoEffect
		}
	}
	return gitUnknown(fmt.Sprintf("`git %s` writes files acc does not work out in advance; use `git checkout -- <paths>` or `git restore -- <paths>` for the files you mean", sub))
}
