package protocol

import "encoding/json"

// DeclaredCapabilities is what a surface that is not a native adapter
// declares it can do for its sessions (docs/mcp.md#sessions): acc-mcp
// declares every one false, so its participants are advisory and manual.
// It is carried as accCapabilities on the MCP server/discover result.
type DeclaredCapabilities struct {
	Lifecycle LifecycleCapabilities `json:"lifecycle"`
	Context   ContextCapabilities   `json:"context"`
	Guards    GuardCapabilities     `json:"guards"`
	Delivery  DeliveryCapabilities  `json:"delivery"`
}

// LifecycleCapabilities: which session lifecycle events the surface reports.
type LifecycleCapabilities struct {
	SessionStart  bool `json:"sessionStart"`
	SessionResume bool `json:"sessionResume"`
	SessionEnd    bool `json:"sessionEnd"`
	ChildSessions bool `json:"childSessions"`
}

// ContextCapabilities: where the surface can put room context before the model.
type ContextCapabilities struct {
	StartupInjection    bool `json:"startupInjection"`
	BeforeTurnInjection bool `json:"beforeTurnInjection"`
	SafePointInjection  bool `json:"safePointInjection"`
}

// GuardCapabilities: which tool uses the surface can stop before they run.
type GuardCapabilities struct {
	BeforeRead  bool `json:"beforeRead"`
	BeforeWrite bool `json:"beforeWrite"`
	BeforeShell bool `json:"beforeShell"`
}

// DeliveryCapabilities: how a message can reach the session's model.
type DeliveryCapabilities struct {
	NextTurn   bool `json:"nextTurn"`
	LivePush   bool `json:"livePush"`
	ReplyRoute bool `json:"replyRoute"`
	// MidTurn: context a post-tool hook prints reaches the model's next
	// request within the same turn (docs/delivery.md#mid-turn).
	MidTurn bool `json:"midTurn,omitempty"`
	// EndOfTurn: a stop hook can keep the agent working once, with a reason
	// its model reads (docs/delivery.md#end-of-turn).
	EndOfTurn bool `json:"endOfTurn,omitempty"`
}

// Session extension keys acc itself writes: the client version a hooked
// session's client reported, and the capabilities proven for it (the
// delivery router reads delivery.nextTurn).
const (
	ExtClientVersion = "acc.clientVersion"
	ExtCapabilities  = "acc.capabilities"
	// ExtActivity holds the session's Activity: whether its agent is in a
	// turn, as its hooks last reported.
	ExtActivity = "acc.activity"
)

// Activity states a hooked session's turn hooks record.
const (
	// ActivityWorking: a turn started (a before-turn hook fired) and has not
	// ended.
	ActivityWorking = "working"
	// ActivityIdle: the last turn ended (a turn-end hook fired).
	ActivityIdle = "idle"
)

// Activity is what a session's hooks last reported about its turns,
// kept in the session's extensions under ExtActivity. A session whose
// client reports no turns (acc attach, acc-mcp) has none.
type Activity struct {
	// State is ActivityWorking or ActivityIdle.
	State string `json:"state"`
	// Since is when State began (RFC 3339 UTC, milliseconds).
	Since string `json:"since"`
}

// SessionActivity returns the Activity recorded on s; ok is false when
// none was recorded or it does not decode to a known state.
func SessionActivity(s *Session) (a Activity, ok bool) {
	v, found := s.Extensions[ExtActivity]
	if !found {
		return a, false
	}
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &a) != nil {
		return Activity{}, false
	}
	if a.State != ActivityWorking && a.State != ActivityIdle {
		return Activity{}, false
	}
	return a, true
}

// SessionCapabilities returns what s declared at attach (all false when
// nothing was recorded: a CLI or MCP session).
func SessionCapabilities(s *Session) DeclaredCapabilities {
	var out DeclaredCapabilities
	v, ok := s.Extensions[ExtCapabilities]
	if !ok {
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	_ = json.Unmarshal(b, &out)
	return out
}

// SessionClientVersion returns the client version recorded on s, or "".
func SessionClientVersion(s *Session) string {
	v, _ := s.Extensions[ExtClientVersion].(string)
	return v
}
