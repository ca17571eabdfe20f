package core

import (
	"slices"
	"sort"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// Decision states (docs/protocol.md#decisions).
const (
	DecisionCurrent    = "current"
	DecisionWithdrawn  = "withdrawn"
	DecisionSuperseded = "superseded"
)

// MaxDecisionTargets is how many decisions one change may name (docs/protocol.md#decisions).
const MaxDecisionTargets = 16

// DecisionStatus is the derived view of one decision within its connected
// group of changes (docs/protocol.md#decisions). It is recomputed on every read, never stored.
type DecisionStatus struct {
	// State is current (a head that is not a withdrawal), withdrawn (a
	// withdrawal head, or a replaced member of a group whose heads are all
	// withdrawals) or superseded (a replaced member of a group that still
	// has a non-withdrawal head).
	State string `json:"state"`
	// IsHead is true when no change names this decision.
	IsHead bool `json:"isHead"`
	// Conflicted is true when the group has more than one head.
	Conflicted bool `json:"conflicted"`
	HeadCount  int  `json:"headCount"`
	// CurrentMessageID is the group's only head, or null when several
	// compete.
	CurrentMessageID *string `json:"currentMessageId"`
	// GroupID is the smallest id among the group's original decisions (those
	// that change nothing); it may change when groups join.
	GroupID string `json:"groupId"`
}

// MessageView is a complete message as an exact read returns it, with the
// derived decision status when it is a decision.
type MessageView struct {
	protocol.Message
	DecisionStatus *DecisionStatus `json:"decisionStatus,omitempty"`
}

// DecisionGroupView computes the decision view of every member of one
// connected group from its links (docs/protocol.md#decisions). member is included even when it has
// no links (a decision nobody changed). The result maps each member id to
// its status.
func DecisionGroupView(member string, links []storage.DecisionLink) map[string]*DecisionStatus {
	members := map[string]bool{member: true}
	replaced := map[string]bool{}
	action := map[string]string{}
	for _, l := range links {
		members[l.From], members[l.To] = true, true
		replaced[l.To] = true
		action[l.From] = l.Action
	}
	var heads, roots, all []string
	hasDecision := false
	for id := range members {
		all = append(all, id)
		if !replaced[id] {
			heads = append(heads, id)
			if action[id] != protocol.DecisionWithdraw {
				hasDecision = true
			}
		}
		if action[id] == "" {
			roots = append(roots, id)
		}
	}
	sort.Strings(heads)
	group := slices.Min(all)
	if len(roots) > 0 {
		group = slices.Min(roots)
	}
	var current *string
	if len(heads) == 1 {
		current = &heads[0]
	}
	out := make(map[string]*DecisionStatus, len(members))
	for id := range members {
		st := &DecisionStatus{IsHead: !replaced[id], Conflicted: len(heads) != 1, HeadCount: len(heads),
			CurrentMessageID: current, GroupID: group}
		switch {
		case st.IsHead && action[id] == protocol.DecisionWithdraw:
			st.State = DecisionWithdrawn
		case st.IsHead:
			st.State = DecisionCurrent
		case hasDecision:
			st.State = DecisionSuperseded
		default:
			st.State = DecisionWithdrawn
		}
		out[id] = st
	}
	return out
}

// decisionViews computes decision statuses within one read, each connected
// group once however many of its members the read shows.
type decisionViews struct {
	tx   storage.ReadTx
	byID map[string]*DecisionStatus
}

func newDecisionViews(tx storage.ReadTx) *decisionViews {
	return &decisionViews{tx: tx, byID: map[string]*DecisionStatus{}}
}

// of returns m's decision status, or nil when m is not a decision.
func (v *decisionViews) of(m *protocol.Message) (*DecisionStatus, error) {
	if m.Kind != protocol.KindDecision {
		return nil, nil
	}
	if st, ok := v.byID[m.MessageID]; ok {
		return st, nil
	}
	links, err := v.tx.DecisionGroup(m.MessageID)
	if err != nil {
		return nil, err
	}
	for id, st := range DecisionGroupView(m.MessageID, links) {
		v.byID[id] = st
	}
	return v.byID[m.MessageID], nil
}

// view returns m as an exact read shows it.
func (v *decisionViews) view(m *protocol.Message) (MessageView, error) {
	st, err := v.of(m)
	return MessageView{Message: *m, DecisionStatus: st}, err
}

// prepareDecisionChange checks the shape of a send's supersedes/withdraws
// (docs/protocol.md#decisions) before any transaction: exit 2 when both are given or the kind is
// not a decision; exit 4 for more than 16, repeated or malformed ids. It
// sets in.change with the ids sorted.
func prepareDecisionChange(in *SendInput) error {
	if len(in.Supersedes) == 0 && len(in.Withdraws) == 0 {
		return nil
	}
	if len(in.Supersedes) > 0 && len(in.Withdraws) > 0 {
		return protocol.Errorf(protocol.ReasonDecisionChangeUsage,
			"a decision change either supersedes or withdraws, never both; send one change with %s, or one with %s", protocol.Field("supersedes"), protocol.Field("withdraws"))
	}
	if in.Kind != protocol.KindDecision {
		return protocol.Errorf(protocol.ReasonDecisionChangeUsage,
			"only decisions accept %s or %s; add %s", protocol.Field("supersedes"), protocol.Field("withdraws"), protocol.FieldValue{Name: "kind", Value: protocol.KindDecision}).With("kind", in.Kind)
	}
	action, ids, flag := protocol.DecisionReplace, in.Supersedes, protocol.Field("supersedes")
	if len(in.Withdraws) > 0 {
		action, ids, flag = protocol.DecisionWithdraw, in.Withdraws, protocol.Field("withdraws")
	}
	if len(ids) > MaxDecisionTargets {
		return protocol.Errorf(protocol.ReasonDecisionTargets,
			"a decision change names at most %d decisions, not %d; to settle more, change them in several steps", MaxDecisionTargets, len(ids)).
			With("count", len(ids))
	}
	seen := map[string]bool{}
	sorted := make([]string, 0, len(ids))
	for _, id := range ids {
		if !protocol.IsPortableID(id) {
			return protocol.Errorf(protocol.ReasonDecisionTargets, "%s %q is not a message id; pass the id of an existing decision", flag, id).With("messageId", id)
		}
		if seen[id] {
			return protocol.Errorf(protocol.ReasonDecisionTargets, "%s names %s twice; name each decision once", flag, id).With("messageId", id)
		}
		seen[id] = true
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	in.change = &protocol.DecisionChange{Action: action, MessageIDs: sorted}
	return nil
}

// inheritRecipients checks that every target of change is a decision of this
// workspace (exit 4 otherwise) and returns the change's recipients: the
// explicit ones plus every target's author and receipt holders, without the
// changing participant, deduplicated and sorted (docs/protocol.md#decisions).
func inheritRecipients(tx storage.ReadTx, me *protocol.Session, change *protocol.DecisionChange, explicit []string) ([]string, error) {
	set := map[string]bool{}
	for _, p := range explicit {
		set[p] = true
	}
	for _, id := range change.MessageIDs {
		m, err := tx.Message(id)
		if err != nil {
			return nil, err
		}
		if m == nil || m.Kind != protocol.KindDecision {
			what := "does not exist"
			if m != nil {
				what = "is a " + m.Kind
			}
			return nil, protocol.Errorf(protocol.ReasonDecisionTargets,
				"a decision change must reference existing decisions in this workspace: %s %s; %s lists them", id, what,
				protocol.Step{Command: protocol.StepHistory, Args: map[string]string{"kind": protocol.KindDecision}}).
				With("messageId", id)
		}
		inherited := []string{m.FromParticipantID}
		rcs, err := tx.ReceiptsByMessage(id)
		if err != nil {
			return nil, err
		}
		for _, rc := range rcs {
			inherited = append(inherited, rc.RecipientParticipantID)
		}
		for _, p := range inherited {
			if p != me.ParticipantID {
				set[p] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}
