package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// Orphan says why a claim no longer blocks anyone: the process recorded on
// its owner session is gone on this host, and the grace has passed since
// the session last showed life (docs/concepts.md#when-a-holder-dies).
type Orphan struct {
	// PID is the owner session's recorded process, which is gone.
	PID int `json:"pid"`
	// LastSeenAt is the session's last heartbeat (UTC, milliseconds): the
	// last time it showed life. Every command the session runs and its
	// hooks (at a turn, and after a tool at most every 30 s) move it.
	LastSeenAt string `json:"lastSeenAt"`
	// GraceMs is the workspace's policy.orphanGraceMs, in milliseconds.
	GraceMs int `json:"graceMs"`
}

// Evidence is the proof in words: "process 4242 gone".
func (o *Orphan) Evidence() string { return fmt.Sprintf("process %d gone", o.PID) }

// orphanJudge decides, once per owner session and for one read of the
// store at one time, whether that session's claims have lapsed. It caches
// each answer, so a room with many claims probes each owner's process once.
type orphanJudge struct {
	r     *Room
	tx    storage.ReadTx
	now   time.Time
	grace time.Duration
	seen  map[string]*Orphan
}

// orphans returns the judge of tx at now with the workspace's grace.
func (r *Room) orphans(tx storage.ReadTx, now time.Time) *orphanJudge {
	return &orphanJudge{r: r, tx: tx, now: now, grace: r.WS.Policy.OrphanGrace(), seen: map[string]*Orphan{}}
}

// of returns why the claims of session owner have lapsed, or nil when they
// still block. They have lapsed only when the session names a pid this
// host may judge (PIDJudged), that process is known gone
// (RecordedProcessGone: no such process, a zombie, or a reused pid), and
// its heartbeat is more than the grace old. A session without a pid, one
// whose pid was recorded on another host or in another PID namespace, a
// live process, an unreadable record or a heartbeat that does not parse
// never lapses: acc only frees what it can prove is abandoned.
func (j *orphanJudge) of(owner string) *Orphan {
	if j == nil {
		return nil
	}
	if o, ok := j.seen[owner]; ok {
		return o
	}
	var o *Orphan
	if s, _, err := findSession(j.tx, owner); err == nil && PIDJudged(s, j.r.Probe) {
		if hb, err := protocol.ParseTime(s.HeartbeatAt); err == nil && j.now.Sub(hb) > j.grace && RecordedProcessGone(s, j.r.Probe) {
			o = &Orphan{PID: *s.PID, LastSeenAt: s.HeartbeatAt, GraceMs: int(j.grace.Milliseconds())}
		}
	}
	j.seen[owner] = o
	return o
}

// lapsed reports whether the claims of session owner no longer block.
func (j *orphanJudge) lapsed(owner string) bool { return j.of(owner) != nil }

// TakenOver is one orphaned claim a new claim took over.
type TakenOver struct {
	ClaimID            string `json:"claimId"`
	Resource           string `json:"resource"`
	OwnerSessionID     string `json:"ownerSessionId"`
	OwnerParticipantID string `json:"ownerParticipantId"`
	Orphan
	// MessageID is the note that told the former participant ("" when the
	// taker is that participant: it already knows).
	MessageID string `json:"messageId,omitempty"`
}

// Bounds of the `git diff --stat` a takeover note carries.
const (
	takeoverDiffTimeout  = 2 * time.Second
	takeoverDiffMaxBytes = 4000
)

// uncommittedStat is `git diff --stat HEAD -- <paths>` run in the checkout
// root (read-only: GIT_OPTIONAL_LOCKS=0 keeps git from refreshing the
// index), for the file: resources among resources: the uncommitted changes,
// staged or not, a takeover leaves in those paths. It is bounded by
// takeoverDiffTimeout and takeoverDiffMaxBytes, and says in words when git
// could not answer or there is nothing to say.
func (r *Room) uncommittedStat(ctx context.Context, resources []string) string {
	var paths []string
	for _, res := range resources {
		if p, ok := strings.CutPrefix(res, "file:"); ok {
			p = strings.TrimSuffix(p, "/**")
			if p == "" {
				p = "."
			}
			paths = append(paths, ":(top,literal)"+p)
		}
	}
	if len(paths) == 0 {
		return "no file paths, so no uncommitted changes to show"
	}
	root := r.WS.CheckoutRoot()
	if r.WS.Git == nil {
		return "not a Git checkout, so acc cannot show what was left uncommitted"
	}
	ctx, cancel := context.WithTimeout(ctx, takeoverDiffTimeout)
	defer cancel()
	out, err := workspace.RunGit(ctx, append(workspace.GitEnv(), "GIT_OPTIONAL_LOCKS=0"), root,
		append([]string{"--no-pager", "diff", "--no-ext-diff", "--no-color", "--stat", "HEAD", "--"}, paths...)...)
	if err != nil {
		return fmt.Sprintf("`git diff --stat HEAD` failed in %s (%v), so acc cannot show what was left uncommitted", root, err)
	}
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return "no uncommitted changes in those paths (`git diff --stat HEAD` is empty; files git does not track are not shown)"
	}
	if len(out) > takeoverDiffMaxBytes {
		cut := strings.LastIndexByte(out[:takeoverDiffMaxBytes], '\n')
		if cut < 0 {
			cut = takeoverDiffMaxBytes
		}
		out = out[:cut] + "\n… (cut at 4000 bytes)"
	}
	return out
}

// takeoverNote is the body of the note that tells the former participant
// what was taken: each resource and the uncommitted changes left there.
func takeoverNote(taker *protocol.Session, taken []TakenOver, stat string) (subject, body string) {
	res := make([]string, len(taken))
	for i, t := range taken {
		res[i] = t.Resource
	}
	subject = "took over your claim on " + strings.Join(res, ", ")
	if len(subject) > 200 {
		subject = fmt.Sprintf("took over %d of your claims", len(taken))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s of %s took over claims of your session %s, whose process was gone:\n", taker.SessionID, taker.ParticipantID, taken[0].OwnerSessionID)
	for _, t := range taken {
		fmt.Fprintf(&b, "- %s (claim %s; %s, last seen %s, grace %s)\n", t.Resource, t.ClaimID, t.Evidence(), t.LastSeenAt,
			ShortDuration(time.Duration(t.GraceMs)*time.Millisecond))
	}
	fmt.Fprintf(&b, "Uncommitted changes left in those paths (git diff --stat HEAD):\n%s\n", stat)
	return subject, b.String()
}
