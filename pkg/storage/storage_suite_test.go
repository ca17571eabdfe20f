package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
)

// runSuite checks the Store/Tx/ReadTx contract against one implementation.
// open returns a fresh, empty store; it registers its own cleanup (closing the
// store and checking its consistency). Every implementation of Store runs it
// from its own _test.go.
func runSuite(t *testing.T, open func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"PutGetEveryKind", suitePutGetEveryKind},
		{"MissingRecordsAreNil", suiteMissingRecordsAreNil},
		{"AreasAreSeparate", suiteAreasAreSeparate},
		{"ListsAndDeletes", suiteListsAndDeletes},
		{"InvalidRecordRefused", suiteInvalidRecordRefused},
		{"ForeignWorkspaceRecordRefused", suiteForeignWorkspaceRecordRefused},
		{"RollbackOnError", suiteRollbackOnError},
		{"RollbackOnPanic", suiteRollbackOnPanic},
		{"EventSequencesGapFree", suiteEventSequencesGapFree},
		{"EventsPaging", suiteEventsPaging},
		{"DuplicateClientMessageID", suiteDuplicateClientMessageID},
		{"ReceiptNeedsMessage", suiteReceiptNeedsMessage},
		{"ReceiptReplace", suiteReceiptReplace},
		{"InboxOrder", suiteInboxOrder},
		{"InboxListable", suiteInboxListable},
		{"InboxBeforeCursorAndKind", suiteInboxBeforeCursorAndKind},
		{"ScanStopsEarly", suiteScanStopsEarly},
		{"Outstanding", suiteOutstanding},
		{"Owed", suiteOwed},
		{"ScanMessages", suiteScanMessages},
		{"Search", suiteSearch},
		{"SearchPending", suiteSearchPending},
		{"SearchPhraseGaps", suiteSearchPhraseGaps},
		{"SearchHugeHandoff", suiteSearchHugeHandoff},
		{"Counts", suiteCounts},
		{"Bindings", suiteBindings},
		{"ConcurrentUpdates", suiteConcurrentUpdates},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// ---- fixtures ----

var suiteBase = time.Date(2026, 9, 4, 9, 0, 0, 0, time.UTC)

// ts returns the suite's base time plus n seconds, as a record timestamp.
func ts(n int) string { return protocol.FormatTime(suiteBase.Add(time.Duration(n) * time.Second)) }

func ptr[T any](v T) *T { return &v }

func fxWorkspace(ws string) *protocol.Workspace {
	return &protocol.Workspace{SchemaVersion: 3, WorkspaceID: ws, DisplayName: "repo", Source: protocol.SourceGit, Roots: []string{"/src/repo"}, CreatedAt: ts(0)}
}

func fxParticipant(ws, id string) *protocol.Participant {
	return &protocol.Participant{SchemaVersion: 3, ParticipantID: id, WorkspaceID: ws, DisplayName: id, Kind: protocol.ParticipantAgent, CreatedAt: ts(0)}
}

func fxSession(ws, id, participant string, started int) *protocol.Session {
	return &protocol.Session{
		SchemaVersion: 3, SessionID: id, ParticipantID: participant, WorkspaceID: ws, Generation: "generation_" + id,
		Harness: "claude", State: protocol.SessionOpen, CheckoutRoot: ptr("/src/repo"), PID: ptr(4242),
		Enforcement: protocol.EnforcementAdvisory, Lifecycle: protocol.LifecycleManaged, HeartbeatCadenceMs: 60000,
		StartedAt: ts(started), HeartbeatAt: ts(started),
	}
}

func fxIntent(ws, session string) *protocol.Intent {
	return &protocol.Intent{SchemaVersion: 3, SessionID: session, WorkspaceID: ws, Summary: "fix the parser", Mode: "edit",
		ResourceHints: []string{"file:src/**"}, State: "active", UpdatedAt: ts(1)}
}

func fxClaim(ws, id, owner string) *protocol.Claim {
	return &protocol.Claim{SchemaVersion: 3, ClaimID: id, WorkspaceID: ws, OwnerSessionID: owner, Resource: "file:src/" + id + ".go",
		Mode: protocol.ClaimExclusive, Enforcement: protocol.EnforcementAdvisory, Reason: "unspecified",
		AcquiredAt: ts(1), ExpiresAt: ts(1801), Generation: "generation_" + id}
}

// fxMessage is an addressed root message of kind with the kind's default
// obligation, sent at ts(sent).
func fxMessage(ws, id, from string, to []string, kind string, sent int) *protocol.Message {
	m := &protocol.Message{
		SchemaVersion: 3, MessageID: id, ThreadID: id, ClientMessageID: "client_" + id, WorkspaceID: ws,
		FromParticipantID: from, FromSessionID: "session_" + from, ToParticipantIDs: to,
		Kind: kind, Obligation: protocol.DefaultObligation(kind, len(to) == 0), Subject: "subject " + id, Body: "body of " + id,
		Artifacts: []protocol.ArtifactRef{}, SentAt: ts(sent),
	}
	if kind == protocol.KindHandoff {
		m.Handoff = &protocol.HandoffPayload{Status: protocol.HandoffComplete, Completed: []string{"x"}, Remaining: []string{}, Blockers: []string{}, Verification: []protocol.ArtifactRef{}}
	}
	return m
}

func fxReceipt(ws, message, recipient, state string) *protocol.Receipt {
	return &protocol.Receipt{SchemaVersion: 3, MessageID: message, WorkspaceID: ws, RecipientParticipantID: recipient, State: state, UpdatedAt: ts(2)}
}

func fxEvent(typ string) *protocol.Event {
	return &protocol.Event{ActorSessionID: "session_a", Type: typ, OccurredAt: ts(3), Payload: map[string]any{"k": "v"}}
}

// ---- helpers ----

func update(t *testing.T, s Store, fn func(Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t *testing.T, s Store, fn func(ReadTx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// must fails the test on err; it returns nil so it can end a tx func.
func must(t *testing.T, err error) error {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return nil
}

func wantEqual[T any](t *testing.T, what string, got *T, want *T) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: not found", what)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %+v\n want %+v", what, *got, *want)
	}
}

// snapshot reads every record reachable through ReadTx, for comparing a
// store before and after a refused or rolled-back transaction.
func snapshot(t *testing.T, s Store) string {
	t.Helper()
	var out string
	view(t, s, func(tx ReadTx) error {
		w, err := tx.Workspace()
		must(t, err)
		out += fmt.Sprintf("ws %+v\n", w)
		for _, a := range []Area{Durable, Ephemeral} {
			ps, err := tx.Participants(a)
			must(t, err)
			ss, err := tx.Sessions(a, false)
			must(t, err)
			is, err := tx.Intents(a)
			must(t, err)
			out += fmt.Sprintf("area %d: %+v %+v %+v\n", a, ps, ss, is)
		}
		cs, err := tx.Claims()
		must(t, err)
		es, err := tx.Events(0, 1000)
		must(t, err)
		bs, err := tx.Bindings()
		must(t, err)
		c, err := tx.Counts()
		must(t, err)
		out += fmt.Sprintf("%+v %+v %+v %+v\n", cs, es, bs, c)
		return tx.ScanMessages(MessageQuery{}, func(m protocol.Message) bool {
			rs, err := tx.ReceiptsByMessage(m.MessageID)
			must(t, err)
			// JSON, not %+v: a message's pointer fields would print as
			// addresses, which differ on every read.
			mj, _ := json.Marshal(m)
			rj, _ := json.Marshal(rs)
			out += fmt.Sprintf("%s %s\n", mj, rj)
			return true
		})
	})
	return out
}

func wantCode(t *testing.T, err error, code protocol.ExitCode, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want exit %d %s", code, reason)
	}
	if got := protocol.CodeOf(err); got != code {
		t.Fatalf("exit %d (%v); want %d", got, err, code)
	}
	if reason != "" && !protocol.IsReason(err, reason) {
		t.Fatalf("reason %s (%v); want %s", protocol.AsError(err).Reason, err, reason)
	}
}

// ---- tests ----

func suitePutGetEveryKind(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	w := fxWorkspace(ws)
	m := fxMessage(ws, "message_1", "alice", []string{"bob"}, protocol.KindQuestion, 10)
	m.Artifacts = []protocol.ArtifactRef{{Kind: "file", URI: "file:a.go", Description: "a"}}
	m.Extensions = protocol.Extensions{"note": "kept"}
	r := fxReceipt(ws, m.MessageID, "bob", protocol.ReceiptQueued)
	b := &SessionBinding{Key: "k1", Harness: "claude", HarnessSessionID: "abc", SessionID: "session_a", Generation: "generation_a", UpdatedAt: ts(4)}
	ev := fxEvent(protocol.EventMessageRecorded)
	for _, a := range []Area{Durable, Ephemeral} {
		update(t, s, func(tx Tx) error {
			must(t, tx.PutParticipant(a, fxParticipant(ws, "alice")))
			must(t, tx.PutSession(a, fxSession(ws, "session_a", "alice", 1)))
			return tx.PutIntent(a, fxIntent(ws, "session_a"))
		})
	}
	update(t, s, func(tx Tx) error {
		must(t, tx.PutWorkspace(w))
		must(t, tx.PutClaim(fxClaim(ws, "claim_1", "session_a")))
		must(t, tx.InsertMessage(m))
		must(t, tx.PutReceipt(r))
		must(t, tx.AppendEvent(ev))
		return tx.PutBinding(b)
	})
	view(t, s, func(tx ReadTx) error {
		got, err := tx.Workspace()
		must(t, err)
		wantEqual(t, "workspace", got, w)
		for _, a := range []Area{Durable, Ephemeral} {
			p, err := tx.Participant(a, "alice")
			must(t, err)
			wantEqual(t, "participant", p, fxParticipant(ws, "alice"))
			se, err := tx.Session(a, "session_a")
			must(t, err)
			wantEqual(t, "session", se, fxSession(ws, "session_a", "alice", 1))
			in, err := tx.Intent(a, "session_a")
			must(t, err)
			wantEqual(t, "intent", in, fxIntent(ws, "session_a"))
		}
		c, err := tx.Claim("claim_1")
		must(t, err)
		wantEqual(t, "claim", c, fxClaim(ws, "claim_1", "session_a"))
		gm, err := tx.Message("message_1")
		must(t, err)
		wantEqual(t, "message", gm, m)
		gm, err = tx.MessageByClientKey("alice", "client_message_1")
		must(t, err)
		wantEqual(t, "message by client key", gm, m)
		gr, err := tx.Receipt("message_1", "bob")
		must(t, err)
		wantEqual(t, "receipt", gr, r)
		evs, err := tx.Events(0, 10)
		must(t, err)
		if len(evs) != 1 {
			t.Fatalf("events = %+v", evs)
		}
		wantEqual(t, "event", &evs[0], ev)
		gb, err := tx.Binding("k1")
		must(t, err)
		wantEqual(t, "binding", gb, b)
		return nil
	})
	// AppendEvent filled in what the store owns.
	if ev.Sequence != "0000000000000001" || !protocol.IsGeneratedID(protocol.KindEvent, ev.EventID) || ev.WorkspaceID != ws || ev.SchemaVersion != 3 {
		t.Fatalf("AppendEvent left %+v", ev)
	}
}

func suiteMissingRecordsAreNil(t *testing.T, s Store) {
	view(t, s, func(tx ReadTx) error {
		checks := map[string]func() (any, error){
			"workspace":     func() (any, error) { return tx.Workspace() },
			"participant":   func() (any, error) { return tx.Participant(Durable, "x") },
			"eph session":   func() (any, error) { return tx.Session(Ephemeral, "x") },
			"intent":        func() (any, error) { return tx.Intent(Durable, "x") },
			"claim":         func() (any, error) { return tx.Claim("x") },
			"message":       func() (any, error) { return tx.Message("x") },
			"by client key": func() (any, error) { return tx.MessageByClientKey("x", "y") },
			"receipt":       func() (any, error) { return tx.Receipt("x", "y") },
			"binding":       func() (any, error) { return tx.Binding("x") },
		}
		for what, get := range checks {
			v, err := get()
			if err != nil || !reflect.ValueOf(v).IsNil() {
				t.Errorf("%s of a missing record = (%v, %v), want (nil, nil)", what, v, err)
			}
		}
		for what, get := range map[string]func() (int, error){
			"participants": func() (int, error) { l, err := tx.Participants(Durable); return len(l), err },
			"sessions":     func() (int, error) { l, err := tx.Sessions(Ephemeral, false); return len(l), err },
			"intents":      func() (int, error) { l, err := tx.Intents(Durable); return len(l), err },
			"claims":       func() (int, error) { l, err := tx.Claims(); return len(l), err },
			"receipts":     func() (int, error) { l, err := tx.ReceiptsByMessage("x"); return len(l), err },
			"events":       func() (int, error) { l, err := tx.Events(0, 10); return len(l), err },
			"bindings":     func() (int, error) { l, err := tx.Bindings(); return len(l), err },
		} {
			if n, err := get(); n != 0 || err != nil {
				t.Errorf("%s of an empty store = (%d, %v)", what, n, err)
			}
		}
		last, err := tx.LastSequence()
		if last != 0 || err != nil {
			t.Errorf("LastSequence of an empty store = (%d, %v)", last, err)
		}
		return nil
	})
}

func suiteAreasAreSeparate(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		must(t, tx.PutParticipant(Ephemeral, fxParticipant(ws, "eph")))
		must(t, tx.PutSession(Ephemeral, fxSession(ws, "session_eph", "eph", 1)))
		must(t, tx.PutIntent(Ephemeral, fxIntent(ws, "session_eph")))
		must(t, tx.PutParticipant(Durable, fxParticipant(ws, "dur")))
		must(t, tx.PutSession(Durable, fxSession(ws, "session_dur", "dur", 1)))
		return tx.PutIntent(Durable, fxIntent(ws, "session_dur"))
	})
	view(t, s, func(tx ReadTx) error {
		for _, c := range []struct {
			a       Area
			present string
			absent  string
		}{{Durable, "dur", "eph"}, {Ephemeral, "eph", "dur"}} {
			if p, _ := tx.Participant(c.a, c.absent); p != nil {
				t.Errorf("area %d sees participant %s of the other area", c.a, c.absent)
			}
			if p, _ := tx.Participant(c.a, c.present); p == nil {
				t.Errorf("area %d lost participant %s", c.a, c.present)
			}
			if se, _ := tx.Session(c.a, "session_"+c.absent); se != nil {
				t.Errorf("area %d sees session of the other area", c.a)
			}
			if in, _ := tx.Intent(c.a, "session_"+c.absent); in != nil {
				t.Errorf("area %d sees intent of the other area", c.a)
			}
			ps, err := tx.Participants(c.a)
			must(t, err)
			if len(ps) != 1 || ps[0].ParticipantID != c.present {
				t.Errorf("area %d lists %+v", c.a, ps)
			}
		}
		return nil
	})
}

func suiteListsAndDeletes(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		for i, p := range []string{"carol", "alice", "bob"} {
			must(t, tx.PutParticipant(Durable, fxParticipant(ws, p)))
			// Started in reverse name order; one session closed.
			se := fxSession(ws, "session_"+p, p, 10-i)
			if p == "bob" {
				se.State = protocol.SessionClosed
			}
			must(t, tx.PutSession(Durable, se))
			must(t, tx.PutIntent(Durable, fxIntent(ws, "session_"+p)))
			must(t, tx.PutClaim(fxClaim(ws, "claim_"+p, "session_"+p)))
		}
		// Two sessions started at the same moment order by id.
		must(t, tx.PutSession(Durable, fxSession(ws, "session_z", "alice", 9)))
		return nil
	})
	view(t, s, func(tx ReadTx) error {
		ps, err := tx.Participants(Durable)
		must(t, err)
		if ids := participantIDs(ps); !reflect.DeepEqual(ids, []string{"alice", "bob", "carol"}) {
			t.Errorf("Participants order %v", ids)
		}
		ss, err := tx.Sessions(Durable, false)
		must(t, err)
		if ids := sessionIDs(ss); !reflect.DeepEqual(ids, []string{"session_bob", "session_alice", "session_z", "session_carol"}) {
			t.Errorf("Sessions order %v (want startedAt, then id)", ids)
		}
		ss, err = tx.Sessions(Durable, true)
		must(t, err)
		if ids := sessionIDs(ss); !reflect.DeepEqual(ids, []string{"session_alice", "session_z", "session_carol"}) {
			t.Errorf("open Sessions %v", ids)
		}
		is, err := tx.Intents(Durable)
		must(t, err)
		if len(is) != 3 || is[0].SessionID != "session_alice" || is[2].SessionID != "session_carol" {
			t.Errorf("Intents %+v", is)
		}
		cs, err := tx.Claims()
		must(t, err)
		if len(cs) != 3 || cs[0].ClaimID != "claim_alice" || cs[2].ClaimID != "claim_carol" {
			t.Errorf("Claims %+v", cs)
		}
		return nil
	})
	// Put replaces; Delete removes; deleting a missing record is no error.
	update(t, s, func(tx Tx) error {
		se := fxSession(ws, "session_alice", "alice", 8)
		se.State = protocol.SessionClosed
		must(t, tx.PutSession(Durable, se))
		must(t, tx.DeleteParticipant(Durable, "bob"))
		must(t, tx.DeleteSession(Durable, "session_bob"))
		must(t, tx.DeleteIntent(Durable, "session_bob"))
		must(t, tx.DeleteClaim("claim_bob"))
		must(t, tx.DeleteClaim("claim_missing"))
		return tx.DeleteParticipant(Ephemeral, "nobody")
	})
	view(t, s, func(tx ReadTx) error {
		se, err := tx.Session(Durable, "session_alice")
		must(t, err)
		if se.State != protocol.SessionClosed {
			t.Errorf("PutSession did not replace: %+v", se)
		}
		ss, _ := tx.Sessions(Durable, true)
		if ids := sessionIDs(ss); !reflect.DeepEqual(ids, []string{"session_z", "session_carol"}) {
			t.Errorf("open Sessions after close %v", ids)
		}
		if p, _ := tx.Participant(Durable, "bob"); p != nil {
			t.Error("participant not deleted")
		}
		if se, _ := tx.Session(Durable, "session_bob"); se != nil {
			t.Error("session not deleted")
		}
		if in, _ := tx.Intent(Durable, "session_bob"); in != nil {
			t.Error("intent not deleted")
		}
		if c, _ := tx.Claim("claim_bob"); c != nil {
			t.Error("claim not deleted")
		}
		return nil
	})
}

func participantIDs(ps []protocol.Participant) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ParticipantID)
	}
	return out
}

func sessionIDs(ss []protocol.Session) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.SessionID)
	}
	return out
}

func suiteInvalidRecordRefused(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error { return tx.PutParticipant(Durable, fxParticipant(ws, "alice")) })
	before := snapshot(t, s)
	bad := []struct {
		name string
		put  func(tx Tx) error
	}{
		{"workspace", func(tx Tx) error { w := fxWorkspace(ws); w.Source = "svn"; return tx.PutWorkspace(w) }},
		{"participant", func(tx Tx) error { p := fxParticipant(ws, "con"); return tx.PutParticipant(Durable, p) }},
		{"eph session", func(tx Tx) error {
			se := fxSession(ws, "session_x", "alice", 1)
			se.HeartbeatCadenceMs = 0
			return tx.PutSession(Ephemeral, se)
		}},
		{"intent", func(tx Tx) error {
			in := fxIntent(ws, "session_x")
			in.Mode = "sleep"
			return tx.PutIntent(Durable, in)
		}},
		{"claim", func(tx Tx) error {
			c := fxClaim(ws, "claim_x", "session_x")
			c.Resource = "a.go"
			return tx.PutClaim(c)
		}},
		{"message", func(tx Tx) error {
			m := fxMessage(ws, "message_x", "alice", []string{}, protocol.KindQuestion, 1)
			return tx.InsertMessage(m)
		}},
		{"receipt", func(tx Tx) error {
			must(t, tx.InsertMessage(fxMessage(ws, "message_y", "alice", []string{"bob"}, protocol.KindNote, 1)))
			return tx.PutReceipt(fxReceipt(ws, "message_y", "bob", "seen"))
		}},
		{"event", func(tx Tx) error { return tx.AppendEvent(fxEvent("message.seen")) }},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			err := s.Update(context.Background(), func(tx Tx) error {
				must(t, tx.PutParticipant(Durable, fxParticipant(ws, "written-first")))
				return c.put(tx)
			})
			wantCode(t, err, protocol.ExitData, "")
			if after := snapshot(t, s); after != before {
				t.Fatalf("a refused transaction changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func suiteForeignWorkspaceRecordRefused(t *testing.T, s Store) {
	other := "workspace_other"
	puts := map[string]func(tx Tx) error{
		"workspace":   func(tx Tx) error { return tx.PutWorkspace(fxWorkspace(other)) },
		"participant": func(tx Tx) error { return tx.PutParticipant(Ephemeral, fxParticipant(other, "a")) },
		"session":     func(tx Tx) error { return tx.PutSession(Durable, fxSession(other, "session_a", "a", 1)) },
		"intent":      func(tx Tx) error { return tx.PutIntent(Durable, fxIntent(other, "session_a")) },
		"claim":       func(tx Tx) error { return tx.PutClaim(fxClaim(other, "claim_a", "session_a")) },
		"message": func(tx Tx) error {
			return tx.InsertMessage(fxMessage(other, "message_a", "a", []string{"b"}, protocol.KindNote, 1))
		},
		"event": func(tx Tx) error {
			e := fxEvent(protocol.EventSessionOpened)
			e.WorkspaceID = other
			return tx.AppendEvent(e)
		},
	}
	for name, put := range puts {
		err := s.Update(context.Background(), put)
		if err == nil || protocol.CodeOf(err) != protocol.ExitData {
			t.Errorf("%s of another workspace: %v, want exit 4", name, err)
		}
	}
	if !durableIsEmpty(t, s) {
		t.Errorf("refused foreign records left rows behind:\n%s", snapshot(t, s))
	}
}

// durableIsEmpty reports whether no record can be read from s (bindings
// aside, which are not records).
func durableIsEmpty(t *testing.T, s Store) bool {
	t.Helper()
	empty := true
	view(t, s, func(tx ReadTx) error {
		w, _ := tx.Workspace()
		ps, _ := tx.Participants(Durable)
		eps, _ := tx.Participants(Ephemeral)
		cs, _ := tx.Claims()
		c, _ := tx.Counts()
		empty = w == nil && len(ps) == 0 && len(eps) == 0 && len(cs) == 0 && c == (Counts{})
		return nil
	})
	return empty
}

func suiteRollbackOnError(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		must(t, tx.PutParticipant(Durable, fxParticipant(ws, "alice")))
		return tx.AppendEvent(fxEvent(protocol.EventSessionOpened))
	})
	before := snapshot(t, s)
	sentinel := errors.New("changed my mind")
	err := s.Update(context.Background(), func(tx Tx) error {
		must(t, tx.PutWorkspace(fxWorkspace(ws)))
		must(t, tx.PutParticipant(Durable, fxParticipant(ws, "bob")))
		must(t, tx.DeleteParticipant(Durable, "alice"))
		must(t, tx.PutSession(Ephemeral, fxSession(ws, "session_e", "bob", 1)))
		must(t, tx.InsertMessage(fxMessage(ws, "message_1", "bob", []string{"alice"}, protocol.KindNote, 1)))
		must(t, tx.PutReceipt(fxReceipt(ws, "message_1", "alice", protocol.ReceiptQueued)))
		must(t, tx.AppendEvent(fxEvent(protocol.EventMessageRecorded)))
		must(t, tx.PutBinding(&SessionBinding{Key: "k", SessionID: "session_e"}))
		// The transaction sees its own writes.
		if p, _ := tx.Participant(Durable, "bob"); p == nil {
			t.Error("a transaction does not see its own write")
		}
		return sentinel
	})
	if !errors.Is(err, sentinel) {
		t.Fatalf("Update returned %v, want the function's error", err)
	}
	if after := snapshot(t, s); after != before {
		t.Fatalf("rollback left changes:\nbefore %s\nafter  %s", before, after)
	}
}

func suiteRollbackOnPanic(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	before := snapshot(t, s)
	type boom struct{ n int }
	recovered := func() (r any) {
		defer func() { r = recover() }()
		_ = s.Update(context.Background(), func(tx Tx) error {
			must(t, tx.PutParticipant(Durable, fxParticipant(ws, "alice")))
			must(t, tx.AppendEvent(fxEvent(protocol.EventSessionOpened)))
			panic(boom{42})
		})
		return nil
	}()
	if recovered != (boom{42}) {
		t.Fatalf("recovered %v, want the original panic value re-raised", recovered)
	}
	if after := snapshot(t, s); after != before {
		t.Fatalf("a panicking transaction left changes:\n%s", after)
	}
	// The store still works: the panic did not leak a lock or a transaction.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Update(ctx, func(tx Tx) error { return tx.PutParticipant(Durable, fxParticipant(ws, "bob")) }); err != nil {
		t.Fatalf("Update after a panic: %v", err)
	}
}

// sequences returns every committed event's sequence number, checking its
// 16-digit form.
func sequences(t *testing.T, s Store) ([]int64, []protocol.Event) {
	t.Helper()
	var evs []protocol.Event
	view(t, s, func(tx ReadTx) error {
		var err error
		evs, err = tx.Events(0, 1_000_000)
		return err
	})
	var out []int64
	for _, e := range evs {
		out = append(out, seqNumber(t, e.Sequence))
	}
	return out, evs
}

// seqNumber parses a 16-digit event cursor, failing on any other shape.
func seqNumber(t *testing.T, s string) int64 {
	t.Helper()
	if !protocol.IsSequence(s) {
		t.Fatalf("sequence %q is not 16 digits", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func wantGapFree(t *testing.T, seqs []int64, n int) {
	t.Helper()
	if len(seqs) != n {
		t.Fatalf("%d events committed, want %d", len(seqs), n)
	}
	for i, q := range seqs {
		if q != int64(i+1) {
			t.Fatalf("event %d has sequence %d; sequences must run 1..%d without gaps: %v", i, q, n, seqs)
		}
	}
}

func suiteEventSequencesGapFree(t *testing.T, s Store) {
	total := 0
	var rolledBack []string
	for i := range 40 {
		k := 1 + i%3
		fail := i%7 == 3
		err := s.Update(context.Background(), func(tx Tx) error {
			for range k {
				e := fxEvent(protocol.EventIntentPublished)
				if err := tx.AppendEvent(e); err != nil {
					return err
				}
				if fail {
					rolledBack = append(rolledBack, e.EventID)
				}
			}
			last, err := tx.LastSequence()
			must(t, err)
			if last != int64(total+k) {
				t.Errorf("LastSequence inside the transaction = %d, want %d", last, total+k)
			}
			if fail {
				return errors.New("roll back")
			}
			return nil
		})
		if fail {
			if err == nil {
				t.Fatal("rollback expected")
			}
			continue
		}
		must(t, err)
		total += k
	}
	seqs, evs := sequences(t, s)
	wantGapFree(t, seqs, total)
	ids := map[string]bool{}
	for _, e := range evs {
		if ids[e.EventID] {
			t.Fatalf("event id %s committed twice", e.EventID)
		}
		ids[e.EventID] = true
	}
	for _, id := range rolledBack {
		if ids[id] {
			t.Fatalf("event %s of a rolled-back transaction was committed", id)
		}
	}
	view(t, s, func(tx ReadTx) error {
		last, err := tx.LastSequence()
		must(t, err)
		if last != int64(total) {
			t.Errorf("LastSequence = %d, want %d", last, total)
		}
		return nil
	})
	// A caller-chosen event id is kept.
	e := fxEvent(protocol.EventSessionClosed)
	e.EventID = "event_chosen"
	update(t, s, func(tx Tx) error { return tx.AppendEvent(e) })
	if e.EventID != "event_chosen" || e.Sequence != protocol.FormatSequence(int64(total+1)) {
		t.Fatalf("AppendEvent changed a chosen id or skipped: %+v", e)
	}
}

func suiteEventsPaging(t *testing.T, s Store) {
	update(t, s, func(tx Tx) error {
		for range 25 {
			must(t, tx.AppendEvent(fxEvent(protocol.EventIntentPublished)))
		}
		return nil
	})
	view(t, s, func(tx ReadTx) error {
		var got []string
		after := int64(0)
		for {
			page, err := tx.Events(after, 10)
			must(t, err)
			if len(page) == 0 {
				break
			}
			if len(page) > 10 {
				t.Fatalf("page of %d events, limit 10", len(page))
			}
			for _, e := range page {
				got = append(got, e.Sequence)
			}
			after = seqNumber(t, page[len(page)-1].Sequence)
		}
		if len(got) != 25 || got[0] != "0000000000000001" || got[24] != "0000000000000025" || !sort.StringsAreSorted(got) {
			t.Fatalf("paged events %v", got)
		}
		page, err := tx.Events(25, 10)
		if len(page) != 0 || err != nil {
			t.Fatalf("events after the last = %v, %v", page, err)
		}
		return nil
	})
}

func suiteDuplicateClientMessageID(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	m := fxMessage(ws, "message_1", "alice", []string{"bob"}, protocol.KindNote, 1)
	update(t, s, func(tx Tx) error { return tx.InsertMessage(m) })
	before := snapshot(t, s)
	dup := fxMessage(ws, "message_2", "alice", []string{"bob"}, protocol.KindNote, 2)
	dup.ClientMessageID = m.ClientMessageID
	if err := s.Update(context.Background(), func(tx Tx) error { return tx.InsertMessage(dup) }); err == nil {
		t.Fatal("a second message with the same (sender, clientMessageId) was inserted")
	}
	sameID := fxMessage(ws, "message_1", "carol", []string{"bob"}, protocol.KindNote, 2)
	if err := s.Update(context.Background(), func(tx Tx) error { return tx.InsertMessage(sameID) }); err == nil {
		t.Fatal("a second message with the same messageId was inserted")
	}
	if after := snapshot(t, s); after != before {
		t.Fatal("a refused insert changed the store")
	}
	// The same clientMessageId from another sender is another key.
	other := fxMessage(ws, "message_3", "carol", []string{"bob"}, protocol.KindNote, 3)
	other.ClientMessageID = m.ClientMessageID
	update(t, s, func(tx Tx) error { return tx.InsertMessage(other) })
	view(t, s, func(tx ReadTx) error {
		got, err := tx.MessageByClientKey("carol", m.ClientMessageID)
		must(t, err)
		wantEqual(t, "carol's message", got, other)
		got, err = tx.MessageByClientKey("alice", m.ClientMessageID)
		must(t, err)
		wantEqual(t, "alice's message", got, m)
		return nil
	})
}

func suiteReceiptNeedsMessage(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	err := s.Update(context.Background(), func(tx Tx) error {
		must(t, tx.PutParticipant(Durable, fxParticipant(ws, "bob")))
		return tx.PutReceipt(fxReceipt(ws, "message_missing", "bob", protocol.ReceiptQueued))
	})
	wantCode(t, err, protocol.ExitData, protocol.ReasonUnknownMessage)
	if !durableIsEmpty(t, s) {
		t.Fatal("the failed transaction left rows")
	}
}

func suiteReceiptReplace(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		must(t, tx.InsertMessage(fxMessage(ws, "message_1", "alice", []string{"carol", "bob"}, protocol.KindQuestion, 1)))
		must(t, tx.PutReceipt(fxReceipt(ws, "message_1", "carol", protocol.ReceiptQueued)))
		return tx.PutReceipt(fxReceipt(ws, "message_1", "bob", protocol.ReceiptQueued))
	})
	next := fxReceipt(ws, "message_1", "bob", protocol.ReceiptRetrieved)
	next.UpdatedAt = ts(50)
	update(t, s, func(tx Tx) error { return tx.PutReceipt(next) })
	view(t, s, func(tx ReadTx) error {
		got, err := tx.Receipt("message_1", "bob")
		must(t, err)
		wantEqual(t, "replaced receipt", got, next)
		rs, err := tx.ReceiptsByMessage("message_1")
		must(t, err)
		if len(rs) != 2 || rs[0].RecipientParticipantID != "bob" || rs[1].RecipientParticipantID != "carol" {
			t.Fatalf("ReceiptsByMessage = %+v, want bob then carol", rs)
		}
		return nil
	})
}

// inboxIDs lists the message ids ScanInbox yields for q.
func inboxIDs(t *testing.T, s Store, q InboxQuery) []string {
	t.Helper()
	var ids []string
	view(t, s, func(tx ReadTx) error {
		return tx.ScanInbox(q, func(r InboxRow) bool {
			if r.Receipt.MessageID != r.Message.MessageID || r.Receipt.RecipientParticipantID != q.Recipient {
				t.Errorf("row pairs message %s with receipt %+v", r.Message.MessageID, r.Receipt)
			}
			ids = append(ids, r.Message.MessageID)
			return true
		})
	})
	return ids
}

func suiteInboxOrder(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	// sentAt seconds; equal times order by message id, descending.
	sent := map[string]int{"message_a": 5, "message_b": 9, "message_c": 5, "message_d": 1, "message_e": 9, "message_f": 7}
	update(t, s, func(tx Tx) error {
		for id, at := range sent {
			must(t, tx.InsertMessage(fxMessage(ws, id, "alice", []string{"bob", "carol"}, protocol.KindNote, at)))
			must(t, tx.PutReceipt(fxReceipt(ws, id, "bob", protocol.ReceiptQueued)))
		}
		// carol only has one receipt; another recipient never leaks in.
		return tx.PutReceipt(fxReceipt(ws, "message_a", "carol", protocol.ReceiptQueued))
	})
	want := []string{"message_e", "message_b", "message_f", "message_c", "message_a", "message_d"}
	if got := inboxIDs(t, s, InboxQuery{Recipient: "bob"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("inbox order %v, want %v", got, want)
	}
	if got := inboxIDs(t, s, InboxQuery{Recipient: "carol"}); !reflect.DeepEqual(got, []string{"message_a"}) {
		t.Fatalf("carol's inbox %v", got)
	}
	if got := inboxIDs(t, s, InboxQuery{Recipient: "alice"}); len(got) != 0 {
		t.Fatalf("the sender's inbox %v", got)
	}
}

func suiteInboxListable(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	// Each case is one message to bob; listable is the rule of
	// docs/protocol.md#pending-messages, retyped: queued/offered always; retrieved only
	// with an obligation; acknowledged never; replaced decisions never.
	type c struct {
		kind     string
		obl      string
		state    string
		replaced bool
		listable bool
	}
	cases := map[string]c{}
	n := 0
	for _, kind := range []struct{ kind, obl string }{
		{protocol.KindNote, protocol.ObligationNone},
		{protocol.KindQuestion, protocol.ObligationReply},
		{protocol.KindDecision, protocol.ObligationAcknowledge},
		{protocol.KindDecision, protocol.ObligationNone},
	} {
		for _, state := range protocol.ReceiptStates {
			for _, replaced := range []bool{false, true} {
				if replaced && kind.kind != protocol.KindDecision {
					continue
				}
				listable := !replaced && (state == protocol.ReceiptQueued || state == protocol.ReceiptOffered ||
					state == protocol.ReceiptRetrieved && kind.obl != protocol.ObligationNone)
				n++
				cases[fmt.Sprintf("message_%02d", n)] = c{kind.kind, kind.obl, state, replaced, listable}
			}
		}
	}
	update(t, s, func(tx Tx) error {
		for id, c := range cases {
			m := fxMessage(ws, id, "alice", []string{"bob"}, c.kind, 1)
			m.Obligation = c.obl
			must(t, tx.InsertMessage(m))
			if c.replaced && id < "message_10" {
				// Replaced before the receipt exists.
				must(t, tx.MarkDecisionReplaced(id))
			}
			must(t, tx.PutReceipt(fxReceipt(ws, id, "bob", c.state)))
			if c.replaced && id >= "message_10" {
				// Replaced after the receipt exists.
				must(t, tx.MarkDecisionReplaced(id))
			}
		}
		return nil
	})
	got := map[string]bool{}
	for _, id := range inboxIDs(t, s, InboxQuery{Recipient: "bob", ListableOnly: true}) {
		got[id] = true
	}
	for id, c := range cases {
		if got[id] != c.listable {
			t.Errorf("%s (%s/%s, %s, replaced=%v): listable=%v, want %v", id, c.kind, c.obl, c.state, c.replaced, got[id], c.listable)
		}
	}
	if all := inboxIDs(t, s, InboxQuery{Recipient: "bob"}); len(all) != len(cases) {
		t.Errorf("unfiltered inbox has %d rows, want %d", len(all), len(cases))
	}
	// Advancing a receipt moves it out of the listing.
	var pick string
	for id, c := range cases {
		if c.listable && c.kind == protocol.KindQuestion && c.state == protocol.ReceiptQueued {
			pick = id
		}
	}
	update(t, s, func(tx Tx) error {
		return tx.PutReceipt(fxReceipt(ws, pick, "bob", protocol.ReceiptAcknowledged))
	})
	for _, id := range inboxIDs(t, s, InboxQuery{Recipient: "bob", ListableOnly: true}) {
		if id == pick {
			t.Errorf("%s is still listed after acknowledgement", id)
		}
	}
}

func suiteInboxBeforeCursorAndKind(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	kinds := []string{protocol.KindNote, protocol.KindQuestion, protocol.KindDecision}
	update(t, s, func(tx Tx) error {
		for i := range 12 {
			id := fmt.Sprintf("message_%02d", i)
			// Pairs share a sentAt so the cursor must break ties by id.
			must(t, tx.InsertMessage(fxMessage(ws, id, "alice", []string{"bob"}, kinds[i%3], i/2)))
			must(t, tx.PutReceipt(fxReceipt(ws, id, "bob", protocol.ReceiptQueued)))
		}
		return nil
	})
	all := inboxIDs(t, s, InboxQuery{Recipient: "bob"})
	// Paging by cursor walks the same order without repeats or holes.
	var paged []string
	q := InboxQuery{Recipient: "bob"}
	for {
		var page []InboxRow
		view(t, s, func(tx ReadTx) error {
			return tx.ScanInbox(q, func(r InboxRow) bool { page = append(page, r); return len(page) < 5 })
		})
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			paged = append(paged, r.Message.MessageID)
		}
		last := page[len(page)-1].Message
		q.BeforeSentAt, q.BeforeMessageID = last.SentAt, last.MessageID
	}
	if !reflect.DeepEqual(paged, all) {
		t.Fatalf("paged %v, want %v", paged, all)
	}
	// Before a middle message with a tied sentAt: its twin with the smaller
	// id comes next.
	got := inboxIDs(t, s, InboxQuery{Recipient: "bob", BeforeSentAt: ts(3), BeforeMessageID: "message_07"})
	if want := []string{"message_06", "message_05", "message_04", "message_03", "message_02", "message_01", "message_00"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("before message_07: %v, want %v", got, want)
	}
	got = inboxIDs(t, s, InboxQuery{Recipient: "bob", Kind: protocol.KindQuestion})
	if want := []string{"message_10", "message_07", "message_04", "message_01"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("questions %v, want %v", got, want)
	}
	got = inboxIDs(t, s, InboxQuery{Recipient: "bob", Kind: protocol.KindQuestion, ListableOnly: true, BeforeSentAt: ts(3), BeforeMessageID: "message_07"})
	if want := []string{"message_04", "message_01"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("questions before message_07 %v, want %v", got, want)
	}
}

func suiteScanStopsEarly(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		for i := range 5 {
			id := fmt.Sprintf("message_%d", i)
			must(t, tx.InsertMessage(fxMessage(ws, id, "alice", []string{"bob"}, protocol.KindQuestion, i)))
			must(t, tx.PutReceipt(fxReceipt(ws, id, "bob", protocol.ReceiptQueued)))
		}
		return nil
	})
	view(t, s, func(tx ReadTx) error {
		calls := 0
		must(t, tx.ScanInbox(InboxQuery{Recipient: "bob"}, func(InboxRow) bool { calls++; return calls < 2 }))
		if calls != 2 {
			t.Errorf("ScanInbox called fn %d times after it returned false", calls)
		}
		calls = 0
		must(t, tx.ScanOutstanding("alice", func(InboxRow) bool { calls++; return false }))
		if calls != 1 {
			t.Errorf("ScanOutstanding called fn %d times", calls)
		}
		calls = 0
		must(t, tx.ScanMessages(MessageQuery{}, func(protocol.Message) bool { calls++; return calls < 3 }))
		if calls != 3 {
			t.Errorf("ScanMessages called fn %d times", calls)
		}
		return nil
	})
}

func suiteOutstanding(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		// alice's question to bob and carol: bob acknowledged, carol retrieved.
		must(t, tx.InsertMessage(fxMessage(ws, "message_q", "alice", []string{"bob", "carol"}, protocol.KindQuestion, 1)))
		must(t, tx.PutReceipt(fxReceipt(ws, "message_q", "bob", protocol.ReceiptAcknowledged)))
		must(t, tx.PutReceipt(fxReceipt(ws, "message_q", "carol", protocol.ReceiptRetrieved)))
		// alice's note: no obligation, never outstanding.
		must(t, tx.InsertMessage(fxMessage(ws, "message_n", "alice", []string{"bob"}, protocol.KindNote, 2)))
		must(t, tx.PutReceipt(fxReceipt(ws, "message_n", "bob", protocol.ReceiptQueued)))
		// alice's decision that needs acknowledgement, still queued.
		d := fxMessage(ws, "message_d", "alice", []string{"bob"}, protocol.KindDecision, 3)
		d.Obligation = protocol.ObligationAcknowledge
		must(t, tx.InsertMessage(d))
		must(t, tx.PutReceipt(fxReceipt(ws, "message_d", "bob", protocol.ReceiptOffered)))
		// bob's request to alice: outstanding for bob, not for alice.
		must(t, tx.InsertMessage(fxMessage(ws, "message_r", "bob", []string{"alice"}, protocol.KindRequest, 4)))
		return tx.PutReceipt(fxReceipt(ws, "message_r", "alice", protocol.ReceiptQueued))
	})
	out := func(from string) []string {
		var got []string
		view(t, s, func(tx ReadTx) error {
			return tx.ScanOutstanding(from, func(r InboxRow) bool {
				if r.Message.FromParticipantID != from || r.Receipt.MessageID != r.Message.MessageID {
					t.Errorf("outstanding row %+v", r)
				}
				got = append(got, r.Message.MessageID+"/"+r.Receipt.RecipientParticipantID)
				return true
			})
		})
		sort.Strings(got)
		return got
	}
	if got, want := out("alice"), []string{"message_d/bob", "message_q/carol"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("alice's outstanding %v, want %v", got, want)
	}
	if got, want := out("bob"), []string{"message_r/alice"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("bob's outstanding %v, want %v", got, want)
	}
	if got := out("carol"); len(got) != 0 {
		t.Fatalf("carol's outstanding %v", got)
	}
}

func suiteScanMessages(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		must(t, tx.InsertMessage(fxMessage(ws, "message_1", "alice", []string{}, protocol.KindDecision, 1)))
		must(t, tx.InsertMessage(fxMessage(ws, "message_2", "alice", []string{"bob"}, protocol.KindNote, 2)))
		d := fxMessage(ws, "message_3", "bob", []string{}, protocol.KindDecision, 3)
		d.DecisionChange = &protocol.DecisionChange{Action: protocol.DecisionReplace, MessageIDs: []string{"message_1"}}
		must(t, tx.InsertMessage(d))
		must(t, tx.MarkDecisionReplaced("message_1"))
		// Marking a non-decision changes nothing.
		must(t, tx.MarkDecisionReplaced("message_2"))
		return tx.InsertMessage(fxMessage(ws, "message_4", "bob", []string{"alice"}, protocol.KindNote, 3))
	})
	scan := func(q MessageQuery) []string {
		var ids []string
		view(t, s, func(tx ReadTx) error {
			return tx.ScanMessages(q, func(m protocol.Message) bool { ids = append(ids, m.MessageID); return true })
		})
		return ids
	}
	cases := []struct {
		q    MessageQuery
		want []string
	}{
		{MessageQuery{}, []string{"message_4", "message_3", "message_2", "message_1"}},
		{MessageQuery{Kind: protocol.KindDecision}, []string{"message_3", "message_1"}},
		{MessageQuery{Kind: protocol.KindDecision, HeadsOnly: true}, []string{"message_3"}},
		{MessageQuery{HeadsOnly: true}, []string{"message_4", "message_3", "message_2"}},
		{MessageQuery{BeforeSentAt: ts(3), BeforeMessageID: "message_4"}, []string{"message_3", "message_2", "message_1"}},
		{MessageQuery{BeforeSentAt: ts(3), BeforeMessageID: "message_3"}, []string{"message_2", "message_1"}},
		{MessageQuery{Kind: protocol.KindNote, BeforeSentAt: ts(2), BeforeMessageID: "message_2"}, nil},
	}
	for _, c := range cases {
		if got := scan(c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ScanMessages(%+v) = %v, want %v", c.q, got, c.want)
		}
	}
}

func suiteCounts(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	counts := func() Counts {
		var c Counts
		view(t, s, func(tx ReadTx) error { var err error; c, err = tx.Counts(); return err })
		return c
	}
	if c := counts(); c != (Counts{}) {
		t.Fatalf("empty store counts %+v", c)
	}
	update(t, s, func(tx Tx) error {
		for i := range 3 {
			must(t, tx.InsertMessage(fxMessage(ws, fmt.Sprintf("message_%d", i), "alice", []string{"bob"}, protocol.KindNote, i)))
		}
		for range 5 {
			must(t, tx.AppendEvent(fxEvent(protocol.EventMessageRecorded)))
		}
		return nil
	})
	if c := counts(); c != (Counts{Messages: 3, Events: 5}) {
		t.Fatalf("counts %+v, want 3 messages and 5 events", c)
	}
}

func suiteBindings(t *testing.T, s Store) {
	b1 := &SessionBinding{Key: "b", Harness: "codex", HarnessSessionID: "h1", SessionID: "session_1", Generation: "generation_1", UpdatedAt: ts(1)}
	b2 := &SessionBinding{Key: "a", Harness: "claude", HarnessSessionID: "h2", SessionID: "session_2", Generation: "generation_2", UpdatedAt: ts(2)}
	update(t, s, func(tx Tx) error { must(t, tx.PutBinding(b1)); return tx.PutBinding(b2) })
	view(t, s, func(tx ReadTx) error {
		got, err := tx.Binding("b")
		must(t, err)
		wantEqual(t, "binding b", got, b1)
		all, err := tx.Bindings()
		must(t, err)
		if len(all) != 2 || all[0] != *b2 || all[1] != *b1 {
			t.Fatalf("Bindings = %+v, want ordered by key", all)
		}
		return nil
	})
	b1b := *b1
	b1b.SessionID, b1b.Generation = "session_3", "generation_3"
	update(t, s, func(tx Tx) error { must(t, tx.PutBinding(&b1b)); return tx.DeleteBinding("a") })
	view(t, s, func(tx ReadTx) error {
		got, err := tx.Binding("b")
		must(t, err)
		wantEqual(t, "replaced binding", got, &b1b)
		if gone, _ := tx.Binding("a"); gone != nil {
			t.Fatal("binding not deleted")
		}
		return nil
	})
	if !durableIsEmpty(t, s) {
		t.Fatal("bindings are not durable history, yet a durable read sees rows")
	}
}

// suiteConcurrentUpdates runs many writers on one store; none loses a write
// and the event log stays gap-free.
func suiteConcurrentUpdates(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	const writers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := s.Update(ctx, func(tx Tx) error {
					id := fmt.Sprintf("message_w%d_%d", w, i)
					if err := tx.InsertMessage(fxMessage(ws, id, fmt.Sprintf("writer%d", w), []string{"bob"}, protocol.KindNote, i)); err != nil {
						return err
					}
					if err := tx.PutReceipt(fxReceipt(ws, id, "bob", protocol.ReceiptQueued)); err != nil {
						return err
					}
					return tx.AppendEvent(fxEvent(protocol.EventMessageRecorded))
				})
				cancel()
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Update: %v", err)
	}
	seqs, _ := sequences(t, s)
	wantGapFree(t, seqs, writers*each)
	if got := len(inboxIDs(t, s, InboxQuery{Recipient: "bob"})); got != writers*each {
		t.Fatalf("%d messages in bob's inbox, want %d", got, writers*each)
	}
}

func suiteOwed(t *testing.T, s Store) {
	ws := s.WorkspaceID()
	update(t, s, func(tx Tx) error {
		add := func(id, from, kind, obl, state string, sent int) {
			m := fxMessage(ws, id, from, []string{"bob"}, kind, sent)
			m.Obligation = obl
			must(t, tx.InsertMessage(m))
			must(t, tx.PutReceipt(fxReceipt(ws, id, "bob", state)))
		}
		add("message_q1", "alice", protocol.KindQuestion, protocol.ObligationReply, protocol.ReceiptRetrieved, 1)
		add("message_q2", "carol", protocol.KindQuestion, protocol.ObligationReply, protocol.ReceiptQueued, 5)
		add("message_q3", "alice", protocol.KindQuestion, protocol.ObligationReply, protocol.ReceiptAcknowledged, 6)
		add("message_n1", "alice", protocol.KindNote, protocol.ObligationNone, protocol.ReceiptQueued, 7)
		add("message_d1", "alice", protocol.KindDecision, protocol.ObligationAcknowledge, protocol.ReceiptOffered, 3)
		add("message_d2", "alice", protocol.KindDecision, protocol.ObligationAcknowledge, protocol.ReceiptQueued, 4)
		must(t, tx.MarkDecisionReplaced("message_d2"))
		// Tied sentAt: newest first means the larger id first.
		add("message_r1", "carol", protocol.KindRequest, protocol.ObligationReply, protocol.ReceiptOffered, 5)
		// Owed by someone else.
		m := fxMessage(ws, "message_x", "alice", []string{"dave"}, protocol.KindQuestion, 9)
		must(t, tx.InsertMessage(m))
		return tx.PutReceipt(fxReceipt(ws, "message_x", "dave", protocol.ReceiptQueued))
	})
	var got []string
	view(t, s, func(tx ReadTx) error {
		return tx.ScanOwed("bob", func(r InboxRow) bool {
			if r.Receipt.RecipientParticipantID != "bob" || r.Receipt.MessageID != r.Message.MessageID {
				t.Errorf("owed row %+v", r)
			}
			got = append(got, r.Message.MessageID)
			return true
		})
	})
	if want := []string{"message_r1", "message_q2", "message_d1", "message_q1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("bob owes %v, want %v", got, want)
	}
}
