package install

import (
	"fmt"
	"slices"

	"github.com/acc-go/acc/pkg/adapters/adapter"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
)

// Turn-delivery policies an installation may record (acc install
// --mid-turn, --end-of-turn): "" means not set, so the room's
// policy.midTurn and policy.endOfTurn decide alone
// (docs/delivery.md#mid-turn, docs/delivery.md#end-of-turn).
var (
	MidTurnPolicies   = []string{"off", "actionable", "all"}
	EndOfTurnPolicies = []string{"off", "actionable"}
)

// TurnDelivery is what an installation records and acc can honour of
// delivery inside a busy session's turn, for one client at the version
// found.
type TurnDelivery struct {
	// MidTurn and EndOfTurn are the recorded policies ("" when not set:
	// the room's policy decides).
	MidTurn   string `json:"midTurn,omitempty"`
	EndOfTurn string `json:"endOfTurn,omitempty"`
	// MidTurnProven and EndOfTurnProven: the capability is proven for the
	// client's version (built-in evidence or acc certify's record).
	MidTurnProven   bool `json:"midTurnProven"`
	EndOfTurnProven bool `json:"endOfTurnProven"`
	// MidTurnWords and EndOfTurnWords say what applies, in words, with the
	// fallback where the capability is not proven.
	MidTurnWords   string `json:"midTurnWords"`
	EndOfTurnWords string `json:"endOfTurnWords"`
}

// turnDelivery judges the recorded policies mid and end of client a at
// version against what is proven for it (caps); found is false when no
// program of the client is on PATH, so there is no version to read.
func turnDelivery(a adapter.Adapter, version string, found bool, caps adapter.Capabilities, mid, end string) TurnDelivery {
	td := TurnDelivery{MidTurn: mid, EndOfTurn: end, MidTurnProven: caps.MidTurn && version != "", EndOfTurnProven: caps.EndOfTurn && version != ""}
	// Where messages wait instead: the next turn, or, for a client of
	// which nothing is proven at any version (Grok), the inbox alone
	// (liveDelivery says the same of live push).
	wait := "messages wait for the next turn"
	if len(a.Evidence()) == 0 {
		wait = "messages wait in its inbox"
	}
	td.MidTurnWords = turnWords(a, version, found, td.MidTurnProven, mid, "policy.midTurn", "after each tool call", wait)
	td.EndOfTurnWords = turnWords(a, version, found, td.EndOfTurnProven, end, "policy.endOfTurn", "holding a stopping agent with a message to answer",
		"a stopping agent is not held; "+wait)
	return td
}

func turnWords(a adapter.Adapter, version string, found, proven bool, policy, key, what, fallback string) string {
	switch {
	case !found:
		// Not "unreadable": there is no program to ask.
		return fmt.Sprintf("off: %s is not found here, so delivery %s is not assumed; %s", a.DisplayName(), what, fallback)
	case version == "":
		return fmt.Sprintf("off: the version of %s is unreadable, so delivery %s is not assumed; %s", a.DisplayName(), what, fallback)
	case !proven:
		return fmt.Sprintf("off: not proven for %s %s; %s", a.DisplayName(), version, fallback)
	case policy == "off":
		return "off for this client (acc install set it); " + fallback
	case policy == "":
		return "as the room's " + key + " says (actionable unless the room changes it)"
	}
	return policy + ", or narrower where the room's " + key + " is"
}

// checkTurnOptions refuses a turn-delivery policy that is not one
// (exit 2 invalid_flag_value).
func checkTurnOptions(o Options) error {
	if o.MidTurn != "" && !slices.Contains(MidTurnPolicies, o.MidTurn) {
		return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--mid-turn %q is not one of off, actionable, all", o.MidTurn)
	}
	if o.EndOfTurn != "" && !slices.Contains(EndOfTurnPolicies, o.EndOfTurn) {
		return protocol.Errorf(protocol.ReasonInvalidFlagValue, "--end-of-turn %q is not one of off, actionable (a note never holds a stopping agent)", o.EndOfTurn)
	}
	return nil
}

// EffectiveTurnPolicy is the policy that applies to a client: the room's
// narrowed by the installation's (router.Narrower).
func EffectiveTurnPolicy(room, installed string) string { return router.Narrower(room, installed) }
