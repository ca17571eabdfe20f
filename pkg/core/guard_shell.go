package core

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// maxNamedPaths is how many paths a git denial names before "and N more";
// maxClearPaths is how many of the caller's own paths the command that
// stays clear lists before it says the list is cut.
const (
	maxNamedPaths = 5
	maxClearPaths = 40
)

// denyGit decides the git commands of a call (in.Git) against the claims
// that block this writer (live): a path one of them would change or sweep
// that such a claim covers denies the call, naming the paths, the holder
// and a command that does the same while leaving those paths alone
// (GitEffect.Clear filled with the caller's other paths). A command whose
// effect is not fully known (GitEffect.Unknown) is denied when any claim
// blocks this writer here, since it could reach it; it is allowed when none
// does. Paths outside this room are not judged here (the hook hands them to
// their own rooms). It reports whether it denied, having filled d.
// docs/hooks.md#git-commands-the-guard-looks-into.
func (r *Room) denyGit(tx storage.ReadTx, d *GuardDecision, in GuardInput, bases []nameBase, live []*protocol.Claim) bool {
	if len(live) == 0 {
		return false
	}
	for _, g := range in.Git {
		e := g.Effect
		if e == nil {
			continue
		}
		type hit struct {
			res string
			c   *protocol.Claim
		}
		var hits []hit
		var own []string
		for _, p := range e.Paths {
			res, err := canonicalPathIn(r.WS, bases, p, in.Cwd)
			if err != nil {
				continue // outside this room
			}
			var by *protocol.Claim
			for _, c := range live {
				if Overlaps(c.Resource, res) {
					by = c
					break
				}
			}
			if by != nil {
				hits = append(hits, hit{res, by})
			} else {
				own = append(own, p)
			}
		}
		if len(hits) == 0 && e.Unknown == "" {
			continue
		}
		first := live[0]
		if len(hits) > 0 {
			first = hits[0].c
		}
		owner := r.claimOwner(tx, first)
		d.Deny, d.ClaimID, d.HolderParticipantID, d.HolderSessionID = true, first.ClaimID, owner, first.OwnerSessionID
		held := fmt.Sprintf("claimed by %s (session %s, guarded) until %s", owner, first.OwnerSessionID, first.ExpiresAt)
		ask := fmt.Sprintf("do not work around it: ask them with `acc message --to %s --type question …`, work on something else, or wait for its release%s",
			owner, waitFor(first.Resource, in.SessionID))
		if len(hits) == 0 {
			d.Resource = first.Resource
			d.Reason = fmt.Sprintf("acc: this call was not run: acc cannot tell which files `%s` would change (%s), and %s is %s; %s",
				protocol.EscapeText(g.Command, protocol.TextLine), protocol.EscapeText(e.Unknown, protocol.TextLine),
				protocol.EscapeText(first.Resource, protocol.TextLine), held, ask)
			return true
		}
		d.Resource = hits[0].res
		verb := "change"
		if e.Sweeps {
			verb = "sweep into a commit"
		}
		named := protocol.EscapeText(hits[0].res, protocol.TextLine)
		if len(hits) > 1 {
			var more []string
			for _, h := range hits[1:min(len(hits), maxNamedPaths)] {
				more = append(more, protocol.EscapeText(h.res, protocol.TextLine))
			}
			named += " (also " + strings.Join(more, ", ")
			if len(hits) > maxNamedPaths {
				named += fmt.Sprintf(" and %d more", len(hits)-maxNamedPaths)
			}
			named += ")"
		}
		reason := fmt.Sprintf("acc: this call was not run: `%s` would %s %s, which is %s; %s",
			protocol.EscapeText(g.Command, protocol.TextLine), verb, named, held, ask)
		switch {
		case e.Clear != "" && len(own) > 0:
			reason += "; to leave the claimed files alone, run `" + protocol.EscapeText(clearCommand(e.Clear, g.Dir, own), protocol.TextLine) + "`"
		case e.Clear != "":
			reason += fmt.Sprintf("; nothing else is left for `%s` to act on", protocol.EscapeText(g.Command, protocol.TextLine))
		}
		d.Reason = reason
		return true
	}
	return false
}

// clearCommand fills template's {paths} with paths (absolute), each
// shell-quoted and relative to dir where it lies beneath it; past
// maxClearPaths it stops and says how many it left out.
func clearCommand(template, dir string, paths []string) string {
	words := make([]string, 0, min(len(paths), maxClearPaths))
	for _, p := range paths[:min(len(paths), maxClearPaths)] {
		if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		words = append(words, ShellWord(p))
	}
	out := strings.ReplaceAll(template, "{paths}", strings.Join(words, " "))
	if len(paths) > maxClearPaths {
		out += fmt.Sprintf(" (and %d more of your paths)", len(paths)-maxClearPaths)
	}
	return out
}

// maxHintShown bounds, in bytes, a hint quoted in a denial.
const maxHintShown = 80

// denyHidden decides the writes of a call whose targets cannot be known
// (in.Hidden): one whose hint reaches a claim that blocks this writer
// denies it, naming the hint and the holder and saying what to do instead;
// the others are allowed
// (docs/hooks.md#how-the-guard-reads-a-shell-command, unknown writes and their
// hints). It reports whether it denied, having filled d.
func (r *Room) denyHidden(tx storage.ReadTx, d *GuardDecision, in GuardInput, live []*protocol.Claim) bool {
	for _, h := range in.Hidden {
		for _, hint := range h.Hints {
			for _, c := range live {
				if !hintHits(in.HintReaches, hint, c.Resource) {
					continue
				}
				owner := r.claimOwner(tx, c)
				d.Deny, d.Resource, d.ClaimID, d.HolderParticipantID, d.HolderSessionID = true, c.Resource, c.ClaimID, owner, c.OwnerSessionID
				shown := hint
				if len(shown) > maxHintShown {
					shown = protocol.TruncateUTF8(shown, maxHintShown) + "…"
				}
				d.Reason = fmt.Sprintf("acc: this call was not run: %s, and it names %s; %s is claimed by %s (session %s, guarded) until %s; "+
					"do not work around it: ask them with `acc message --to %s --type question …`, work on something else, or wait for its release%s "+
					"(a command that only reads the file, such as `cat`, is never denied)",
					protocol.EscapeText(h.Why, protocol.TextLine), protocol.EscapeText(shown, protocol.TextLine),
					protocol.EscapeText(c.Resource, protocol.TextLine), owner, c.OwnerSessionID, c.ExpiresAt, owner, waitFor(c.Resource, in.SessionID))
				return true
			}
		}
	}
	return false
}

// hintHits reports whether hint could reach the claimed resource: for a
// claim on a directory (DIR/**) when the hint reaches DIR or a tail of the
// hint lies beneath it; for the whole root (**) always; else when reaches
// (or, without it, equality or a directory above) says so.
func hintHits(reaches func(hint, path string) bool, hint, resource string) bool {
	p, ok := strings.CutPrefix(resource, "file:")
	if !ok || hint == "" {
		return false
	}
	if reaches == nil {
		reaches = func(h, p string) bool {
			h = strings.TrimPrefix(h, "./")
			return h == p || strings.HasPrefix(p, strings.TrimSuffix(h, "/")+"/")
		}
	}
	if p == "**" {
		return true
	}
	dir, glob := strings.CutSuffix(p, "/**")
	if !glob {
		return reaches(hint, p)
	}
	if reaches(hint, dir) {
		return true
	}
	for tail := hint; ; {
		if t := strings.TrimPrefix(tail, "./"); strings.HasPrefix(t, dir+"/") {
			return true
		}
		i := strings.IndexByte(tail, '/')
		if i < 0 {
			return false
		}
		tail = tail[i+1:]
	}
}

// Holds reports whether path (absolute) lies in this room's workspace:
// whether the canonical name function names it here.
func (r *Room) Holds(path string) bool {
	_, err := CanonicalPath(r.WS, path, "")
	return err == nil
}

// GitToplevel is `git rev-parse --show-toplevel` run read-only in dir
// (absolute) within ctx, without the caller's GIT_* variables: the top of
// the work tree holding dir, and false when there is none or git fails.
// The shell guard resolves `$(git rev-parse --show-toplevel)` with it
// (docs/hooks.md#how-the-guard-reads-a-shell-command).
func GitToplevel(ctx context.Context, dir string) (string, bool) {
	out, err := workspace.RunGit(ctx, append(workspace.GitEnv(), "GIT_OPTIONAL_LOCKS=0"), dir, "--no-optional-locks", "rev-parse", "--show-toplevel")
	top := strings.TrimSuffix(out, "\n")
	if err != nil || !filepath.IsAbs(top) || strings.Contains(top, "\n") {
		return "", false
	}
	return top, true
}

// waitFor is the runnable `acc wait` that returns once resource is free,
// in parentheses after a space, for a deny reason: with the writer's own
// --session (its claims set aside; a session id alone acts as no one
// there) when the writer has one. The resource is shell-quoted, then
// shown by the one display rule.
func waitFor(resource, sessionID string) string {
	cmd := "acc wait --released " + ShellWord(resource)
	if sessionID != "" {
		cmd += " --session " + ShellWord(sessionID)
	}
	return " (`" + protocol.EscapeText(cmd, protocol.TextLine) + "`)"
}
