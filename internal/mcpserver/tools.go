package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acc-go/acc/internal/livepush"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/router"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// call is what a tool's run function gets: the opened room and the
// connection's session, resolved after the arguments passed validation.
type call struct {
	room   *core.Room
	caller core.Caller
	dir    string // the workspace directory resources are resolved from
}

// tool is one MCP tool: its listing, its closed input schema, an optional
// shape check that runs before any session is resolved, and its run
// function, which calls exactly one core operation.
type tool struct {
	def *mcp.Tool
	// check refuses shapes the schema cannot express (acc_sync's scope
	// rules) before a session is resolved.
	check func(raw json.RawMessage) error
	// roomCheck refuses what needs the workspace to judge (a resource's
	// spelling and place) once the room is open, still before a session is
	// resolved.
	roomCheck func(r *core.Room, dir string, raw json.RawMessage) error
	// before, when set, answers a call without resolving a session (a
	// retried acc_finish whose handoff exists); done false goes on.
	before func(ctx context.Context, r *core.Room, participant string, raw json.RawMessage) (out any, done bool, err error)
	// renames maps core's field names to this tool's argument names, for
	// refusals (acc_request's title is core's subject).
	renames map[string]string
	// run decodes raw (already validated) and calls the core operation.
	run func(ctx context.Context, c *call, raw json.RawMessage) (any, error)
	// finish marks acc_finish: it uses the session without a heartbeat
	// first and forgets it afterwards (docs/mcp.md#sessions).
	finish bool
	// args is the zero value of the struct the arguments decode into; a
	// test holds it to the schema (schema_test.go).
	args any
	// effect is what a call does to the room, advertised as the tool's
	// annotations (annotations.go).
	effect effect
	// does is the tool's line in docs/mcp.md's generated tool table.
	does string
}

// registry lists every tool, in the order tools/list shows them.
var registry = []func() tool{
	statusTool, syncTool, searchTool, workTool, claimTool, releaseTool,
	messageTool, requestTool, inboxTool, replyTool, ackTool, finishTool,
}

const (
	pollNote   = " MCP has no incoming push or wake-up: poll acc_inbox (and acc_status or acc_sync) to see what peers did."
	mutateNote = " After it succeeds, poll acc_inbox, acc_status or acc_sync to see the effect; do not repeat the call to check."
	sendNote   = " The message is committed to the room first; it may be offered natively to eligible opted-in recipients and otherwise stays queued in their inbox. A retry must reuse the same clientMessageId and the same payload."
)

func def(name, desc string, schema *jsonschema.Schema) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: schema}
}

// decode unmarshals validated arguments into the tool's argument struct.
func decode[T any](raw json.RawMessage) (T, error) {
	var v T
	if len(raw) == 0 || string(raw) == "null" {
		return v, nil
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

// sent is the result of every send-like tool: the message and one planned
// delivery per recipient (pkg/router, as the CLI reports it).
type sent struct {
	Message  protocol.Message  `json:"message"`
	Receipt  *protocol.Receipt `json:"receipt,omitempty"`
	Delivery []router.Delivery `json:"delivery"`
}

// sentOf has a committed send delivered (livepush.AfterSend). The call's
// deadline may have run out while it waited for the store's lock; the send
// is recorded all the same, so delivery runs within its own bound instead
// of failing on the call's (docs/delivery.md#when-acc-cannot-tell-whether-a-write-landed).
func sentOf(ctx context.Context, r *core.Room, res *core.SendResult) *sent {
	d := livepush.AfterSend(ctx, r, &res.Message)
	return &sent{Message: res.Message, Receipt: res.Receipt, Delivery: d}
}

func statusTool() tool {
	return tool{
		def: def("acc_status", "Show the room: every participant's live session (presence, enforcement, lifecycle, checkout, branch), the live claims and the room's protection verdict. Read-only."+pollNote,
			closed(nil, nil)),
		effect: effect{readOnly: true,
			why: "reads the roster and the claims"},
		args: struct{}{},
		does: "the roster, live claims and protection",
		run: func(ctx context.Context, c *call, _ json.RawMessage) (any, error) {
			return c.room.Status(ctx, core.StatusQuery{Caller: &c.caller, Sender: &c.caller, LivePolicy: c.room.Install.LivePush})
		},
	}
}

type syncArgs struct {
	Cursor    string `json:"cursor,omitempty"`
	Scope     string `json:"scope,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Current   bool   `json:"current,omitempty"`
	MessageID string `json:"messageId,omitempty"`
}

func (a syncArgs) query() core.SyncQuery {
	return core.SyncQuery{Scope: a.Scope, Cursor: a.Cursor, Limit: a.Limit, Kind: a.Kind, Current: a.Current, MessageID: a.MessageID}
}

func syncTool() tool {
	return tool{
		def: def("acc_sync", "Catch up with the room. scope delta (default) returns the events after cursor (a 16-digit sequence from the previous call) with the roster and your attention; full adds a snapshot of every record; history lists the room's messages as summaries, newest first (kind filters it, current with kind decision lists decision heads), or reads one message in full with messageId. Never changes a receipt."+pollNote,
			closed(nil, map[string]*jsonschema.Schema{
				"cursor":    str("delta/full: the 16-digit cursor of the previous call; history: the nextCursor message id"),
				"scope":     enum("delta (default), full or history", "delta", "full", "history"),
				"limit":     integer("at most this many events or summaries", 1, core.MaxSyncLimit),
				"kind":      enum("history only: list messages of this kind", protocol.MessageKinds...),
				"current":   boolean("history with kind decision: decision heads only"),
				"messageId": str("history only: read this message in full, with every recipient's receipt"),
			})),
		effect: effect{readOnly: true,
			why: "reads events, records and history; reading a message in full here moves no receipt"},
		args: syncArgs{},
		does: "catch up: events since a cursor, a full snapshot, or the history (summaries, or one message in full)",
		check: func(raw json.RawMessage) error {
			a, err := decode[syncArgs](raw)
			if err != nil {
				return err
			}
			return core.CheckSyncQuery(a.query())
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			a, err := decode[syncArgs](raw)
			if err != nil {
				return nil, err
			}
			q := a.query()
			if q.Scope != core.SyncScopeHistory {
				q.Caller = &c.caller
			}
			res, err := c.room.Sync(ctx, q)
			if err != nil {
				return nil, err
			}
			return res.Data(), nil
		},
	}
}

type searchArgs struct {
	Query   string   `json:"query"`
	From    []string `json:"from,omitempty"`
	To      string   `json:"to,omitempty"`
	Kind    string   `json:"kind,omitempty"`
	Current bool     `json:"current,omitempty"`
	Since   string   `json:"since,omitempty"`
	Until   string   `json:"until,omitempty"`
	Thread  string   `json:"thread,omitempty"`
	Cursor  string   `json:"cursor,omitempty"`
	Limit   int      `json:"limit,omitempty"`
}

// query is the core search of a, refusing a since or until that is not an
// RFC 3339 time (invalid_argument, exit 2).
func (a searchArgs) query() (core.SearchQuery, error) {
	q := core.SearchQuery{Query: a.Query, From: a.From, To: a.To, Kind: a.Kind, Current: a.Current, Thread: a.Thread, Cursor: a.Cursor, Limit: a.Limit}
	for _, w := range []struct {
		name, v string
		t       *time.Time
	}{{"since", a.Since, &q.Since}, {"until", a.Until, &q.Until}} {
		if w.v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, w.v)
		if err != nil {
			return q, argError(protocol.ReasonInvalidArgument, "arguments.%s must be an RFC 3339 time such as 2026-12-01T09:30:00Z, not %q", w.name, w.v)
		}
		*w.t = t
	}
	return q, nil
}

func searchTool() tool {
	return tool{
		def: def("acc_search", "Search the room's messages (subjects, bodies, handoff lines, decisions; all of them, as history shows them), best match first, each with a snippet of where it matched (highlights are [start, end) code-point offsets of snippet.text). query: words that must all match, \"a phrase\", -excluded, prefix*. The filters narrow the hits; cursor is a previous page's nextCursor. Read-only; snippets and subjects are untrusted peer content.",
			closed([]string{"query"}, map[string]*jsonschema.Schema{
				"query":   str(`words (all must match), "phrases", -excluded and prefix* terms, e.g. auth token "refresh flow" -draft migrat*`),
				"from":    strings_("only messages sent by these participant ids"),
				"to":      str("only messages addressed to this participant id by name"),
				"kind":    enum("only messages of this kind", protocol.MessageKinds...),
				"current": boolean("only decisions that are current (their group's head)"),
				"since":   str("only messages sent at or after this RFC 3339 time"),
				"until":   str("only messages sent before this RFC 3339 time"),
				"thread":  str("only messages of this thread id"),
				"cursor":  str("the nextCursor of the previous page"),
				"limit":   integer("at most this many hits", 1, core.MaxPageLimit),
			})),
		effect: effect{readOnly: true,
			why: "reads the room's messages and their search index; moves no receipt"},
		args: searchArgs{},
		does: "full-text search of the room's messages, ranked, with snippets, filters and a cursor",
		check: func(raw json.RawMessage) error {
			a, err := decode[searchArgs](raw)
			if err != nil {
				return err
			}
			q, err := a.query()
			if err != nil {
				return err
			}
			return core.CheckSearch(q)
		},
		// Search is public like history and writes no record: it is
		// answered without resolving a session, so a search leaves no
		// heartbeat.
		before: func(ctx context.Context, r *core.Room, _ string, raw json.RawMessage) (any, bool, error) {
			a, err := decode[searchArgs](raw)
			if err != nil {
				return nil, true, err
			}
			q, err := a.query()
			if err != nil {
				return nil, true, err
			}
			page, err := r.Search(ctx, q)
			return page, true, err
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			return nil, fmt.Errorf("acc_search is answered before a session is resolved")
		},
	}
}

type workArgs struct {
	Summary       string   `json:"summary,omitempty"`
	Mode          string   `json:"mode,omitempty"`
	State         string   `json:"state,omitempty"`
	Clear         bool     `json:"clear,omitempty"`
	ResourceHints []string `json:"resourceHints,omitempty"`
}

func workTool() tool {
	s := closed(nil, map[string]*jsonschema.Schema{
		"summary":       str(fmt.Sprintf("one line: what you are doing (at most %d characters)", protocol.MaxIntentText)),
		"mode":          enum("what kind of work", protocol.IntentModes...),
		"state":         enum("default active", protocol.IntentStates...),
		"clear":         {Const: jsonschema.Ptr[any](true), Type: "boolean", Description: "true clears your intent; takes no other field"},
		"resourceHints": strings_("resources you expect to touch, spelled like acc_claim (file:PATH, file:DIR/**)"),
	})
	s.OneOf = []*jsonschema.Schema{
		{Required: []string{"clear"}, Not: anyOf(requires("summary"), requires("mode"), requires("state"), requires("resourceHints"))},
		{Required: []string{"summary", "mode"}, Not: requires("clear")},
	}
	return tool{
		def: def("acc_work", "Publish what this session is doing (intent) so peers see it, or clear it with {clear:true}. Intent protects nothing: claim what you are about to change with acc_claim."+mutateNote+pollNote, s),
		effect: effect{destructive: true,
			why: "replaces or clears the intent this session published before"},
		args: workArgs{},
		does: "publish or clear your intent",
		roomCheck: func(r *core.Room, dir string, raw json.RawMessage) error {
			a, err := decode[workArgs](raw)
			if err != nil || a.Clear {
				return err
			}
			return r.CheckWork(core.IntentInput{Summary: a.Summary, Mode: a.Mode, State: a.State, Hints: a.ResourceHints, Cwd: dir})
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			a, err := decode[workArgs](raw)
			if err != nil {
				return nil, err
			}
			if a.Clear {
				if _, err := c.room.Work(ctx, core.IntentInput{Caller: c.caller, Clear: true, Cwd: c.dir}); err != nil {
					return nil, err
				}
				return map[string]bool{"cleared": true}, nil
			}
			return c.room.Work(ctx, core.IntentInput{Caller: c.caller, Summary: a.Summary, Mode: a.Mode, State: a.State,
				Hints: a.ResourceHints, Cwd: c.dir})
		},
	}
}

type claimArgs struct {
	Resource     string `json:"resource,omitempty"`
	Action       string `json:"action"`
	Mode         string `json:"mode,omitempty"`
	Reason       string `json:"reason,omitempty"`
	LeaseSeconds int    `json:"leaseSeconds,omitempty"`
	ClaimID      string `json:"claimId,omitempty"`
}

func claimTool() tool {
	s := closed([]string{"action"}, map[string]*jsonschema.Schema{
		"resource":     str("acquire: what to claim, file:PATH, file:DIR/** or another scheme such as doc:…"),
		"action":       enum("acquire a new claim or renew one you hold", "acquire", "renew"),
		"mode":         enum("acquire: exclusive (default) or shared", "shared", "exclusive"),
		"reason":       str("acquire: one line saying why (default unspecified)"),
		"leaseSeconds": integer(fmt.Sprintf("lease length in seconds (default %d)", core.DefaultLeaseSeconds), 1, 0),
		"claimId":      str("renew: the claim to renew"),
	})
	s.OneOf = []*jsonschema.Schema{
		{Properties: map[string]*jsonschema.Schema{"action": {Const: jsonschema.Ptr[any]("acquire")}},
			Required: []string{"resource"}, Not: requires("claimId")},
		{Properties: map[string]*jsonschema.Schema{"action": {Const: jsonschema.Ptr[any]("renew")}},
			Required: []string{"claimId"}, Not: anyOf(requires("resource"), requires("mode"), requires("reason"))},
	}
	return tool{
		def: def("acc_claim", "Claim a resource before changing it (action acquire), or renew a claim you hold (action renew). Claims made over MCP are always advisory: peers see them, nothing blocks a write. A conflicting claim of another session is refused, naming its holder; one whose holder's process is gone past the workspace's orphan grace is taken over instead (takenOver names it, and its holder is sent a note). Release with acc_release."+mutateNote+pollNote, s),
		effect: effect{destructive: true,
			why: "adds a claim or moves a lease's end; may take over an orphaned claim of another session, which ends that claim"},
		args: claimArgs{},
		does: "claim a resource (always advisory over MCP) or renew a claim",
		roomCheck: func(r *core.Room, dir string, raw json.RawMessage) error {
			a, err := decode[claimArgs](raw)
			if err != nil {
				return err
			}
			if a.Action == "renew" {
				if err := protocol.CheckPortableID("claimId", a.ClaimID); err != nil {
					return err
				}
				return core.CheckLease(a.LeaseSeconds)
			}
			return r.CheckClaim(core.ClaimInput{Resource: a.Resource, Cwd: dir, Mode: a.Mode,
				Enforcement: protocol.EnforcementAdvisory, Reason: a.Reason, LeaseSeconds: a.LeaseSeconds})
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			a, err := decode[claimArgs](raw)
			if err != nil {
				return nil, err
			}
			if a.Action == "renew" {
				return c.room.RenewClaim(ctx, c.caller, a.ClaimID, a.LeaseSeconds)
			}
			return c.room.Claim(ctx, core.ClaimInput{Caller: c.caller, Resource: a.Resource, Cwd: c.dir, Mode: a.Mode,
				Enforcement: protocol.EnforcementAdvisory, Reason: a.Reason, LeaseSeconds: a.LeaseSeconds})
		},
	}
}

type releaseArgs struct {
	ClaimID string `json:"claimId"`
}

func releaseTool() tool {
	return tool{
		def: def("acc_release", "Release a claim this session holds, by its claimId."+mutateNote+pollNote,
			closed([]string{"claimId"}, map[string]*jsonschema.Schema{"claimId": str("the claim to release")})),
		effect: effect{destructive: true, idempotent: true,
			why: "ends a claim; releasing it again is refused and changes nothing"},
		args: releaseArgs{},
		does: "release a claim",
		check: func(raw json.RawMessage) error {
			a, err := decode[releaseArgs](raw)
			if err != nil {
				return err
			}
			return protocol.CheckPortableID("claimId", a.ClaimID)
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			a, err := decode[releaseArgs](raw)
			if err != nil {
				return nil, err
			}
			res, err := c.room.Release(ctx, core.ReleaseInput{Caller: c.caller, ClaimID: a.ClaimID, Cwd: c.dir})
			if err != nil {
				return nil, err
			}
			return map[string]string{"released": res.ClaimID}, nil
		},
	}
}

type messageArgs struct {
	To              []string `json:"to"`
	Subject         string   `json:"subject"`
	Body            string   `json:"body"`
	Kind            string   `json:"kind,omitempty"`
	Obligation      string   `json:"obligation,omitempty"`
	ClientMessageID string   `json:"clientMessageId,omitempty"`
	Supersedes      []string `json:"supersedes,omitempty"`
	Withdraws       []string `json:"withdraws,omitempty"`
}

func (a messageArgs) input(c core.Caller) core.SendInput {
	kind := a.Kind
	if kind == "" {
		kind = protocol.KindNote
	}
	return core.SendInput{Caller: c, To: a.To, Kind: kind, Obligation: a.Obligation,
		Subject: a.Subject, Body: a.Body, ClientMessageID: a.ClientMessageID, Supersedes: a.Supersedes, Withdraws: a.Withdraws}
}

func messageTool() tool {
	return tool{
		def: def("acc_message", "Record a note, question, request or decision for participants (to) or the room (to: []). Answers come from acc_reply and handoffs from acc_finish. "+fmt.Sprintf("A decision may supersede or withdraw 1 to %d earlier decisions.", core.MaxDecisionTargets)+sendNote+mutateNote+pollNote,
			closed([]string{"to", "subject", "body"}, map[string]*jsonschema.Schema{
				"to":              strings_("recipient participant ids; [] for the room"),
				"subject":         str(fmt.Sprintf("one line (at most %d characters)", protocol.MaxLineText)),
				"body":            str(fmt.Sprintf("the message (at most %d characters)", protocol.MaxProseText)),
				"kind":            enum("default note", protocol.KindNote, protocol.KindQuestion, protocol.KindRequest, protocol.KindDecision),
				"obligation":      enum("what the recipients owe; default from the kind", protocol.ObligationNone, protocol.ObligationAcknowledge, protocol.ObligationReply),
				"clientMessageId": str("idempotency key: the same key and content return the first message"),
				"supersedes":      boundedIDs("decision only: the decisions this one replaces"),
				"withdraws":       boundedIDs("decision only: the decisions this one withdraws"),
			})),
		effect: effect{
			why: "adds a message and its receipts; a decision that supersedes or withdraws earlier ones links them and deletes nothing; without clientMessageId each call records another message"},
		args: messageArgs{},
		does: "record a message; returns `{message, delivery}`",
		check: func(raw json.RawMessage) error {
			a, err := decode[messageArgs](raw)
			if err != nil {
				return err
			}
			return core.CheckSend(a.input(core.Caller{}))
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			a, err := decode[messageArgs](raw)
			if err != nil {
				return nil, err
			}
			res, err := c.room.Send(ctx, a.input(c.caller))
			if err != nil {
				return nil, err
			}
			return sentOf(ctx, c.room, res), nil
		},
	}
}

type requestArgs struct {
	To              string `json:"toParticipantId"`
	Title           string `json:"title"`
	Detail          string `json:"detail,omitempty"`
	ClientMessageID string `json:"clientMessageId,omitempty"`
}

func requestInput(raw json.RawMessage, c core.Caller) (core.RequestInput, error) {
	a, err := decode[requestArgs](raw)
	return core.RequestInput{Caller: c, To: a.To, Title: a.Title, Detail: a.Detail, ClientMessageID: a.ClientMessageID}, err
}

func requestTool() tool {
	return tool{
		renames: map[string]string{"subject": "title", "body": "detail"},
		def: def("acc_request", "Ask one participant to do something; they owe a reply (not completion). The title is the body when detail is absent."+sendNote+mutateNote+pollNote,
			closed([]string{"toParticipantId", "title"}, map[string]*jsonschema.Schema{
				"toParticipantId": str("the participant asked"),
				"title":           str(fmt.Sprintf("one line (at most %d characters)", protocol.MaxLineText)),
				"detail":          str(fmt.Sprintf("the request in full (at most %d characters)", protocol.MaxProseText)),
				"clientMessageId": str("idempotency key"),
			})),
		effect: effect{
			why: "adds a request and its receipt; without clientMessageId each call records another"},
		args: requestArgs{},
		does: "ask for something; a reply is owed",
		check: func(raw json.RawMessage) error {
			in, err := requestInput(raw, core.Caller{})
			if err != nil {
				return err
			}
			return core.CheckRequest(in)
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			in, err := requestInput(raw, c.caller)
			if err != nil {
				return nil, err
			}
			res, err := c.room.Request(ctx, in)
			if err != nil {
				return nil, err
			}
			return sentOf(ctx, c.room, res), nil
		},
	}
}

type inboxArgs struct {
	MessageID string `json:"messageId,omitempty"`
	Cursor    string `json:"cursor,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

func inboxTool() tool {
	s := closed(nil, map[string]*jsonschema.Schema{
		"messageId": str("read this message in full; marks your receipt retrieved"),
		"cursor":    str("continue after this message id (the previous page's nextCursor)"),
		"limit":     integer(fmt.Sprintf("at most this many summaries (default %d)", core.DefaultPageLimit), 1, core.MaxPageLimit),
	})
	s.Not = anyOf(requires("messageId", "cursor"), requires("messageId", "limit"))
	return tool{
		def: def("acc_inbox", "Without messageId: a read-only page of your pending messages as summaries, newest first, never bodies, changing nothing; continue with cursor = nextCursor, or call again without it to see new arrivals. With messageId: the whole message as a one-item list, and your receipt moves to retrieved. Answer questions and requests with acc_reply, acknowledge the rest with acc_ack."+pollNote, s),
		effect: effect{idempotent: true,
			why: "the summary page changes nothing, but reading a message by messageId moves your receipt to retrieved; reading it again moves nothing"},
		args: inboxArgs{},
		does: "without `messageId`: a read-only page of pending summaries, newest first; with it: the whole message, and your receipt moves to `retrieved`",
		check: func(raw json.RawMessage) error {
			a, err := decode[inboxArgs](raw)
			if err != nil {
				return err
			}
			if a.MessageID != "" {
				return core.CheckMessageID(a.MessageID)
			}
			return core.CheckInbox(core.InboxQuery{Cursor: a.Cursor, Limit: a.Limit})
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			a, err := decode[inboxArgs](raw)
			if err != nil {
				return nil, err
			}
			if a.MessageID != "" {
				return c.room.ReadMessage(ctx, c.caller, a.MessageID)
			}
			return c.room.Inbox(ctx, core.InboxQuery{Caller: c.caller, Cursor: a.Cursor, Limit: a.Limit})
		},
	}
}

type replyArgs struct {
	MessageID       string `json:"messageId"`
	Body            string `json:"body"`
	Subject         string `json:"subject,omitempty"`
	ClientMessageID string `json:"clientMessageId,omitempty"`
}

func replyInput(raw json.RawMessage, c core.Caller) (core.ReplyInput, error) {
	a, err := decode[replyArgs](raw)
	return core.ReplyInput{Caller: c, MessageID: a.MessageID, Body: a.Body, Subject: a.Subject, ClientMessageID: a.ClientMessageID}, err
}

func replyTool() tool {
	return tool{
		def: def("acc_reply", "Answer a message in its thread and acknowledge it, in one step. It says nothing about whether requested work is done."+sendNote+mutateNote+pollNote,
			closed([]string{"messageId", "body"}, map[string]*jsonschema.Schema{
				"messageId":       str("the message answered"),
				"body":            str(fmt.Sprintf("the answer (at most %d characters)", protocol.MaxProseText)),
				"subject":         str(fmt.Sprintf("one line (at most %d characters; default \"Re: <original subject>\")", protocol.MaxLineText)),
				"clientMessageId": str("idempotency key"),
			})),
		effect: effect{
			why: "adds the answer and acknowledges the original; without clientMessageId each call records another answer"},
		args: replyArgs{},
		does: "answer in the thread and acknowledge the original, in one step",
		check: func(raw json.RawMessage) error {
			in, err := replyInput(raw, core.Caller{})
			if err != nil {
				return err
			}
			return core.CheckReply(in)
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			in, err := replyInput(raw, c.caller)
			if err != nil {
				return nil, err
			}
			res, err := c.room.Reply(ctx, in)
			if err != nil {
				return nil, err
			}
			return sentOf(ctx, c.room, res), nil
		},
	}
}

type ackArgs struct {
	MessageID string `json:"messageId"`
}

func ackTool() tool {
	return tool{
		def: def("acc_ack", "Acknowledge a message that asks for acknowledgement (questions and requests need acc_reply instead). Returns your receipt."+mutateNote+pollNote,
			closed([]string{"messageId"}, map[string]*jsonschema.Schema{"messageId": str("the message acknowledged")})),
		effect: effect{idempotent: true,
			why: "moves your receipt to acknowledged; acknowledging again changes nothing"},
		args: ackArgs{},
		does: "acknowledge a message that asks for it (questions and requests need a reply)",
		check: func(raw json.RawMessage) error {
			a, err := decode[ackArgs](raw)
			if err != nil {
				return err
			}
			return core.CheckMessageID(a.MessageID)
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			a, err := decode[ackArgs](raw)
			if err != nil {
				return nil, err
			}
			return c.room.Ack(ctx, c.caller, a.MessageID)
		},
	}
}

type finishArgs struct {
	Goal            string   `json:"goal"`
	Status          string   `json:"status,omitempty"`
	Completed       []string `json:"completed,omitempty"`
	Remaining       []string `json:"remaining,omitempty"`
	Blockers        []string `json:"blockers,omitempty"`
	To              string   `json:"toParticipantId,omitempty"`
	ClientMessageID string   `json:"clientMessageId,omitempty"`
}

func finishInput(raw json.RawMessage, c core.Caller) (core.FinishInput, error) {
	a, err := decode[finishArgs](raw)
	if a.Status == "" {
		a.Status = protocol.HandoffPartial
	}
	return core.FinishInput{Caller: c, Goal: a.Goal, Status: a.Status, Completed: a.Completed,
		Remaining: a.Remaining, Blockers: a.Blockers, To: a.To, ClientMessageID: a.ClientMessageID}, err
}

func finishTool() tool {
	return tool{
		def: def("acc_finish", "Hand off and end this session: records what was done and what remains (to one known participant, or to the room), releases this session's claims and ends its presence, in one step. The next tool call starts a new session."+sendNote+pollNote,
			closed([]string{"goal"}, map[string]*jsonschema.Schema{
				"goal":            str(fmt.Sprintf("one line: what this session set out to do (at most %d characters)", protocol.MaxLineText)),
				"status":          enum("default partial", protocol.HandoffComplete, protocol.HandoffPartial, protocol.HandoffBlocked),
				"completed":       strings_("lines that were done"),
				"remaining":       strings_("lines still to do"),
				"blockers":        strings_("lines that block progress"),
				"toParticipantId": str("hand off to this participant (it owes an acknowledgement)"),
				"clientMessageId": str("idempotency key"),
			})),
		finish: true,
		effect: effect{destructive: true,
			why: "releases every claim of this session and ends it; without clientMessageId a second call opens and ends another session"},
		args: finishArgs{},
		does: "hand off, release your claims, end your session",
		renames: map[string]string{"subject": "goal", "body": "completed, remaining and blockers together", "message.handoff.completed": "completed",
			"message.handoff.remaining": "remaining", "message.handoff.blockers": "blockers"},
		check: func(raw json.RawMessage) error {
			in, err := finishInput(raw, core.Caller{})
			if err != nil {
				return err
			}
			return core.CheckFinish(in)
		},
		before: func(ctx context.Context, r *core.Room, participant string, raw json.RawMessage) (any, bool, error) {
			in, err := finishInput(raw, core.Caller{})
			if err != nil || in.ClientMessageID == "" {
				return nil, false, err
			}
			// A retry of a finish that closed its session returns that
			// handoff, as the CLI does, without opening a new session.
			prior, err := r.PriorHandoff(ctx, participant, in.ClientMessageID)
			if err != nil || prior == nil {
				return nil, false, err
			}
			return sentOf(ctx, r, prior), true, nil
		},
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			in, err := finishInput(raw, c.caller)
			if err != nil {
				return nil, err
			}
			res, err := c.room.Finish(ctx, in)
			if err != nil {
				return nil, err
			}
			return sentOf(ctx, c.room, res), nil
		},
	}
}
