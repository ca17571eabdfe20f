package core

import (
	"context"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// Room is one workspace opened for one command or one long-lived surface.
type Room struct {
	WS       *workspace.Workspace
	Store    storage.Store
	DataHome string
	// Env is the validated environment of
	// docs/protocol.md#environment-variables (Open resolves it once).
	Env *workspace.RuntimeEnv
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Probe answers whether a client process is alive.
	Probe ProcessProbe
	// Install is what the client installations of this data home record
	// of delivery, as OpenOptions.ReadInstall gave it when the room was
	// opened (one reading per room); the zero value records nothing.
	Install InstallPolicies
}

// InstallPolicies are the delivery policies that acc install recorded
// for each client it wired, one reading of the data home's record per
// opened room: every reader of one process (the status's live-push column, the
// router deciding a send's delivery, a hook's mid-turn and end-of-turn
// decision) takes them from the opened room, so they judge by the same
// record (docs/delivery.md#where-delivery-is-decided). pkg/core only
// carries them; the internal side that knows the record supplies them.
type InstallPolicies struct {
	// LivePush gives the live-push policy recorded for a client by adapter
	// id: off, actionable or all (docs/delivery.md#live-push-waking-an-idle-session).
	// nil is off for every client.
	LivePush func(adapter string) string
	// Turn gives the mid-turn and end-of-turn policies recorded for a
	// client by adapter id, "" for each that is not set (the room's
	// policy.midTurn and policy.endOfTurn then decide alone;
	// docs/delivery.md#mid-turn). nil sets none.
	Turn func(adapter string) (midTurn, endOfTurn string)
}

// OpenOptions select the workspace and the data home.
type OpenOptions struct {
	// Cwd is the directory discovery starts from (the --cwd flag, or the
	// process working directory).
	Cwd string
	// ConfigPath names an acc.workspace.json explicitly (--workspace).
	ConfigPath string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// GOOS selects the platform data directory rules; "" means runtime.GOOS.
	GOOS string
	// NoCreate opens an empty, in-memory store when the workspace has no
	// store file yet, so commands that cannot create anything (everything but
	// attach) leave no file behind.
	NoCreate bool
	// ReadInstall reads the client installations' delivery policies of
	// the data home (its argument), once, into Room.Install; nil leaves
	// Room.Install empty (no client's policy is known: live push off, the
	// room's turn policies alone).
	ReadInstall func(dataHome string) InstallPolicies
}

// Open discovers the workspace governing o.Cwd (docs/protocol.md#workspace-discovery),
// resolves and validates the environment of
// docs/protocol.md#environment-variables (RuntimeEnv), refuses
// runtime state inside the workspace
// (for a Git workspace: any of its worktrees, or its .git; exit 2), refuses
// a data home that exists but is no usable directory (data_home_unusable,
// exit 2; DataHomeError), and opens the workspace's store: on the
// PostgreSQL server of StoreURL, else the SQLite file in the data home
// (exit 3 when busy or unreachable, exit 4 when the store is foreign,
// newer or corrupt, or the server refuses acc's role; store_needs_config
// and env_invalid of StoreURL, exit 2).
func Open(ctx context.Context, o OpenOptions) (*Room, error) {
	ws, env, err := locate(ctx, o)
	if err != nil {
		return nil, err
	}
	home := env.DataHome
	if err := workspace.DataHomeError(home); err != nil {
		return nil, err
	}
	mode := storeCreate
	if o.NoCreate {
		mode = storeOrEmpty
	}
	st, err := openStore(ctx, ws, env, o.Getenv, mode)
	if err != nil {
		return nil, err
	}
	r := newRoom(ws, st, env)
	if o.ReadInstall != nil {
		r.Install = o.ReadInstall(home)
	}
	return r, nil
}

// newRoom is an opened room of ws over st, with the store's clock
// (storeClock) and the system process probe.
func newRoom(ws *workspace.Workspace, st storage.Store, env *workspace.RuntimeEnv) *Room {
	return &Room{WS: ws, Store: st, DataHome: env.DataHome, Env: env, Now: storeClock(st), Probe: SystemProbe()}
}

// Close releases the store.
func (r *Room) Close() error { return r.Store.Close() }

func (r *Room) now() time.Time { return r.Now().UTC().Truncate(time.Millisecond) }

// Caller is the session a command acts as (docs/decisions.md#2-caller-identity).
type Caller struct {
	SessionID  string `json:"sessionId"`
	Generation string `json:"generation"`
}

// findSession looks a session up in the durable area, then the ephemeral one.
func findSession(tx storage.ReadTx, id string) (*protocol.Session, storage.Area, error) {
	s, err := tx.Session(storage.Durable, id)
	if err != nil || s != nil {
		return s, storage.Durable, err
	}
	s, err = tx.Session(storage.Ephemeral, id)
	return s, storage.Ephemeral, err
}

// requireOwner returns the caller's open session, or an exit-5 refusal:
// session_not_open when it is missing or closed, stale_generation when the
// generation is not the current one. action completes "cannot … from this
// session generation".
func requireOwner(tx storage.ReadTx, c Caller, action string) (*protocol.Session, storage.Area, error) {
	s, area, err := findSession(tx, c.SessionID)
	if err != nil {
		return nil, area, err
	}
	if s == nil {
		return nil, area, protocol.Errorf(protocol.ReasonSessionNotOpen,
			"session %s is not open in this workspace; attach again with %s and use the pair it prints", c.SessionID, protocol.Step{Command: protocol.StepAttach}).With("sessionId", c.SessionID)
	}
	if s.Generation != c.Generation {
		return nil, area, staleGeneration(action, c.SessionID)
	}
	if s.State != protocol.SessionOpen {
		return nil, area, protocol.Errorf(protocol.ReasonSessionNotOpen,
			"cannot %s: session %s is closed; attach a new session with %s", action, c.SessionID, protocol.Step{Command: protocol.StepAttach}).With("sessionId", c.SessionID)
	}
	return s, area, nil
}

// allSessions lists sessions of both areas (the ephemeral area is empty once
// the room is materialised).
func allSessions(tx storage.ReadTx, openOnly bool) ([]protocol.Session, error) {
	d, err := tx.Sessions(storage.Durable, openOnly)
	if err != nil {
		return nil, err
	}
	e, err := tx.Sessions(storage.Ephemeral, openOnly)
	if err != nil {
		return nil, err
	}
	return append(d, e...), nil
}

// knownParticipant reports whether id was ever a participant of the room.
func knownParticipant(tx storage.ReadTx, id string) (bool, error) {
	for _, a := range []storage.Area{storage.Durable, storage.Ephemeral} {
		p, err := tx.Participant(a, id)
		if err != nil {
			return false, err
		}
		if p != nil {
			return true, nil
		}
	}
	return false, nil
}

func knownParticipantIDs(tx storage.ReadTx) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, a := range []storage.Area{storage.Durable, storage.Ephemeral} {
		ps, err := tx.Participants(a)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !seen[p.ParticipantID] {
				seen[p.ParticipantID] = true
				out = append(out, p.ParticipantID)
			}
		}
	}
	return out, nil
}

func newEvent(at, actor, typ string, payload map[string]any) *protocol.Event {
	if payload == nil {
		payload = map[string]any{}
	}
	return &protocol.Event{ActorSessionID: actor, Type: typ, OccurredAt: at, Payload: payload}
}

func strPtr(s string) *string { return &s }
