package core

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
)

// IdentityInput is everything that can name the calling session
// (docs/decisions.md#2-caller-identity).
type IdentityInput struct {
	// FlagSession and FlagGeneration are --session and --generation.
	FlagSession, FlagGeneration string
	// EnvSession and EnvGeneration are ACC_SESSION and ACC_GENERATION.
	EnvSession, EnvGeneration string
	// Environ is the process environment ("KEY=value"), searched for a
	// client's own session id that matches a hook binding.
	Environ []string
	// SetAside is true for a command that acts as no one and uses the
	// session only to leave its own records out of what it reads (acc
	// wait --released sets the named session's claims aside): a session
	// named alone is taken there without proof, since naming it grants
	// nothing.
	SetAside bool
}

// ResolveCaller decides which session runs this command, in order:
// --session with --generation; ACC_SESSION with ACC_GENERATION; then
// automatically — the client's own session id in the environment matching
// exactly one live hook binding, else exactly one live session whose
// checkout is this worktree, else exactly one live session.
//
// A session id alone (--session, or ACC_SESSION without ACC_GENERATION)
// does not act as that session (docs/concepts.md#acting-as-a-session):
// a session id is public — deny reasons and status show it — and the
// generation is the proof. It is accepted only when the first automatic
// step proves it: a value in the environment equals the client session id
// of a hook binding of that session at its current generation, and the
// session is open. Otherwise it is exit 2 generation_required, naming the
// missing generation. A generation without a session (--generation or
// ACC_GENERATION alone) is refused, never ignored; a flag never pairs with
// a variable, so --generation with ACC_SESSION is refused too, and
// --session outranks both variables. Steps 2 and 3 never pick another
// session than that of an agent client running this process (one whose
// recorded process is an ancestor, AgentAncestor): then it is exit 2
// caller_identity_unresolved. It never guesses: no candidate is
// exit 2 caller_identity_unresolved, several are exit 2
// caller_identity_ambiguous naming them.
func (r *Room) ResolveCaller(ctx context.Context, in IdentityInput) (Caller, error) {
	guessed := false // picked by step 2 or 3
	named, source := in.FlagSession, ""
	switch {
	case in.FlagSession != "" && in.FlagGeneration != "":
		return Caller{SessionID: in.FlagSession, Generation: in.FlagGeneration}, nil
	case in.FlagGeneration != "" && in.EnvSession != "":
		// A pair is both flags or both variables, never one of each
		// (docs/cli.md): say so, or ACC_SESSION looks ignored.
		return Caller{}, protocol.Errorf(protocol.ReasonCallerIdentityUnresolved,
			"%s was given without %s: pass %s too (acc never pairs a flag with ACC_SESSION from the environment)", protocol.Field("generation"), protocol.Field("session"), protocol.Field("session"))
	case in.FlagGeneration != "":
		return Caller{}, protocol.Errorf(protocol.ReasonCallerIdentityUnresolved,
			"%s was given without %s: pass %s too; both come from the output of %s", protocol.Field("generation"), protocol.Field("session"), protocol.Field("session"), protocol.Step{Command: protocol.StepAttach})
	case in.FlagSession == "" && in.EnvSession != "" && in.EnvGeneration != "":
		return Caller{SessionID: in.EnvSession, Generation: in.EnvGeneration}, nil
	case in.FlagSession == "" && in.EnvSession != "":
		// Half a pair still names the session: falling through to automatic
		// resolution could act as a different one.
		named, source = in.EnvSession, " (named by ACC_SESSION)"
	case in.FlagSession == "" && in.EnvGeneration != "":
		return Caller{}, protocol.Errorf(protocol.ReasonCallerIdentityUnresolved,
			"ACC_GENERATION is set but ACC_SESSION is not; set both from the output of %s, or pass %s and %s", protocol.Step{Command: protocol.StepAttach}, protocol.Field("session"), protocol.Field("generation")).
			With("variable", "ACC_SESSION")
	}
	var out Caller
	err := r.Store.View(ctx, func(tx storage.ReadTx) error {
		if named != "" {
			s, _, err := findSession(tx, named)
			if err != nil {
				return err
			}
			if s == nil || s.State != protocol.SessionOpen {
				return protocol.Errorf(protocol.ReasonCallerIdentityUnresolved,
					"no open session %s%s in this workspace; %s lists the sessions here", named, source, protocol.Step{Command: protocol.StepStatus}).With("sessionId", named)
			}
			proved, err := boundInEnv(tx, s, in.Environ)
			if err != nil {
				return err
			}
			if !proved && !in.SetAside {
				return generationRequired(named, source != "")
			}
			out = Caller{SessionID: s.SessionID, Generation: s.Generation}
			return nil
		}
		sessions, err := allSessions(tx, true)
		if err != nil {
			return err
		}
		now := r.now()
		var live []protocol.Session
		for _, s := range sessions {
			if Presence(&s, now, r.Probe) != PresenceOffline {
				live = append(live, s)
			}
		}
		pick := func(c []protocol.Session) bool {
			if len(c) == 1 {
				out = Caller{SessionID: c[0].SessionID, Generation: c[0].Generation}
				return true
			}
			return false
		}
		// 1. The client's own session id, exported by the client, bound by a hook.
		bindings, err := tx.Bindings()
		if err != nil {
			return err
		}
		values := envValues(in.Environ)
		var byEnv []protocol.Session
		for _, b := range bindings {
			// A live-push binding holds an endpoint, not the client's
			// session id: it names no caller.
			if isLiveKey(b.Key) || !values[b.HarnessSessionID] {
				continue
			}
			for _, s := range live {
				if s.SessionID == b.SessionID && s.Generation == b.Generation &&
					!slices.ContainsFunc(byEnv, func(o protocol.Session) bool { return o.SessionID == s.SessionID }) {
					byEnv = append(byEnv, s)
				}
			}
		}
		if pick(byEnv) {
			return nil
		}
		// 2. This worktree's checkout.
		var here []protocol.Session
		root := r.WS.CheckoutRoot()
		for _, s := range live {
			if s.CheckoutRoot != nil && *s.CheckoutRoot == root {
				here = append(here, s)
			}
		}
		if pick(here) {
			guessed = true
			return nil
		}
		// 3. The only live session.
		if pick(live) {
			guessed = true
			return nil
		}
		if len(live) == 0 {
			return protocol.Errorf(protocol.ReasonCallerIdentityUnresolved,
				"no live session is attached here; run %s, then pass %s and %s", protocol.Step{Command: protocol.StepAttach, Args: map[string]string{"participant": "NAME"}}, protocol.Field("session"), protocol.Field("generation"))
		}
		cands := live
		if len(here) > 1 {
			cands = here
		}
		names := make([]string, 0, len(cands))
		for _, s := range cands {
			names = append(names, fmt.Sprintf("%s (%s) %s", s.ParticipantID, s.Harness, s.SessionID))
		}
		return protocol.Errorf(protocol.ReasonCallerIdentityAmbiguous,
			"could not tell which of %d live sessions is running this: %s; pass %s and %s", len(cands), strings.Join(names, "; "), protocol.Field("session"), protocol.Field("generation")).
			With("candidates", names)
	})
	if err != nil || !guessed {
		return out, err
	}
	// Steps 2 and 3 go by where and what, not by who: an agent whose own
	// client is running it never falls through to another session by
	// them (a worktree path is public; `cd` there is one command).
	agent, err := r.AgentAncestor(ctx)
	if err != nil {
		return Caller{}, err
	}
	if agent != nil && agent.SessionID != out.SessionID {
		return Caller{}, protocol.Errorf(protocol.ReasonCallerIdentityUnresolved,
			"this command runs under the client of %s (%s session %s), so acc will not act as the session %s that this directory would otherwise pick; "+
				"pass your own %s and %s (your hook's trusted line %s has them)",
			agent.ParticipantID, agent.Harness, agent.SessionID, out.SessionID, protocol.Field("session"), protocol.Field("generation"), protocol.Step{Command: protocol.StepTrustedLine}).With("sessionId", agent.SessionID)
	}
	return out, nil
}

// envValues is the set of non-empty values in environ ("KEY=value").
// Any variable may carry the client's own session id: which one a client
// exports is the adapter's business, and a value only counts when it
// equals a hook binding's client session id.
func envValues(environ []string) map[string]bool {
	values := map[string]bool{}
	for _, kv := range environ {
		if _, v, ok := strings.Cut(kv, "="); ok && v != "" {
			values[v] = true
		}
	}
	return values
}

// boundInEnv reports whether environ proves the caller is session s: a
// hook binding of s at its current generation (not a live-push endpoint)
// holds a client session id that is a value in environ — the proof
// automatic resolution uses (docs/concepts.md#acting-as-a-session).
func boundInEnv(tx storage.ReadTx, s *protocol.Session, environ []string) (bool, error) {
	bindings, err := tx.Bindings()
	if err != nil {
		return false, err
	}
	values := envValues(environ)
	for _, b := range bindings {
		if !isLiveKey(b.Key) && b.SessionID == s.SessionID && b.Generation == s.Generation && values[b.HarnessSessionID] {
			return true, nil
		}
	}
	return false, nil
}

// generationRequired refuses a session named without its generation and
// without the environment's proof (fromEnv: named by ACC_SESSION): it says
// why and where the pair is found.
func generationRequired(sessionID string, fromEnv bool) error {
	var named, missing any = protocol.FieldValue{Name: "session", Value: sessionID}, protocol.Field("generation")
	if fromEnv {
		named, missing = "ACC_SESSION="+sessionID, "ACC_GENERATION"
	}
	return protocol.Errorf(protocol.ReasonGenerationRequired,
		"%s needs its %s: a session id is public (deny reasons and %s show it) and only the generation proves the caller is that session; "+
			"if it is your session, the pair is in the trusted line %s your hook gives you each turn, or in the output of %s; "+
			"if it is another's, you cannot act as it: ask its participant with %s, or wait for what you need",
		named, missing, protocol.Step{Command: protocol.StepStatus}, protocol.Step{Command: protocol.StepTrustedLine, Args: map[string]string{"session": sessionID}},
		protocol.Step{Command: protocol.StepAttach}, protocol.Step{Command: protocol.StepMessage}).With("sessionId", sessionID)
}
