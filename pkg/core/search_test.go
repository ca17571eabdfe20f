package core

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/google/go-cmp/cmp"
)

func parsed(t *testing.T, q string) *protocol.SearchQuery {
	t.Helper()
	p, err := protocol.ParseSearch(q)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMakeSnippet: the field that matched most (body and handoff lines
// before the subject), a window of at most SnippetCodePoints code points
// around the first match with … where cut, and highlights as code-point
// offsets of the window that land exactly on the matched words.
func TestMakeSnippet(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("filler words here ", 30) + "the café tokens rotate " + strings.Repeat("more trailing text ", 30)
	cases := []struct {
		name string
		m    protocol.Message
		q    string
		want Snippet
	}{
		{"subject only", protocol.Message{Subject: "Rotate tokens", Body: "nothing"}, "tokens",
			Snippet{Field: "subject", Text: "Rotate tokens", Highlights: [][2]int{{7, 13}}}},
		{"body over subject", protocol.Message{Subject: "tokens", Body: "Rotate the tokens"}, "tokens",
			Snippet{Field: "body", Text: "Rotate the tokens", Highlights: [][2]int{{11, 17}}}},
		{"prefix and phrase words", protocol.Message{Subject: "s", Body: "Tokenise the auth-token flow"}, `tok* "auth token" -flow`,
			Snippet{Field: "body", Text: "Tokenise the auth-token flow", Highlights: [][2]int{{0, 8}, {13, 17}, {18, 23}}}},
		{"handoff line", protocol.Message{Subject: "s", Body: "b", Handoff: &protocol.HandoffPayload{Blockers: []string{"waiting on the quokka"}}}, "quokka",
			Snippet{Field: "handoff.blockers", Text: "waiting on the quokka", Highlights: [][2]int{{15, 21}}}},
	}
	for _, c := range cases {
		got := MakeSnippet(&c.m, parsed(t, c.q))
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", c.name, d)
		}
	}

	got := MakeSnippet(&protocol.Message{Subject: "s", Body: long}, parsed(t, "café tokens"))
	runes := []rune(got.Text)
	if n := len(runes); n > SnippetCodePoints {
		t.Errorf("a window of %d code points, more than %d", n, SnippetCodePoints)
	}
	if !strings.HasPrefix(got.Text, "…") || !strings.HasSuffix(got.Text, "…") {
		t.Errorf("a window cut on both sides should say so: %q", got.Text)
	}
	var words []string
	for _, h := range got.Highlights {
		words = append(words, string(runes[h[0]:h[1]]))
	}
	if d := cmp.Diff([]string{"café", "tokens"}, words); d != "" {
		t.Errorf("highlighted words (-want +got)\n%s\nin %q", d, got.Text)
	}
	if !utf8.ValidString(got.Text) {
		t.Errorf("the window is not valid UTF-8")
	}
}

// FuzzMakeSnippet: whatever the text and query, the snippet is valid
// UTF-8 of at most SnippetCodePoints code points, and its highlights are
// in order, inside it, and each covers one word the query names.
func FuzzMakeSnippet(f *testing.F) {
	f.Add("Rotate the auth tokens", "tokens")
	f.Add(strings.Repeat("ab ", 200)+"zebra", "zeb*")
	f.Add("e\u0301 café\u202e x", "café")
	f.Fuzz(func(t *testing.T, body, query string) {
		q, err := protocol.ParseSearch(query)
		if err != nil {
			return
		}
		s := MakeSnippet(&protocol.Message{Subject: "subject", Body: body}, q)
		if !utf8.ValidString(s.Text) && utf8.ValidString(body) {
			t.Fatalf("invalid UTF-8 window %q", s.Text)
		}
		n := utf8.RuneCountInString(s.Text)
		if n > SnippetCodePoints && utf8.RuneCountInString(body) > SnippetCodePoints {
			t.Fatalf("window of %d code points", n)
		}
		runes := []rune(s.Text)
		at := 0
		for _, h := range s.Highlights {
			if h[0] < at || h[0] >= h[1] || h[1] > len(runes) {
				t.Fatalf("highlight %v out of order or bounds in %q (%v)", h, s.Text, s.Highlights)
			}
			if !termsMatch(protocol.SearchWords(string(runes[h[0]:h[1]]))[0], q) {
				t.Fatalf("highlight %q matches no term of %q", string(runes[h[0]:h[1]]), query)
			}
			at = h[1]
		}
	})
}

// pendingStore stands for a store where an acc of schema version 2,
// still running after the upgrade, wrote messages without indexing them:
// its reads report waiting messages until a write indexes them (the
// engines' side of this is storage's SearchPending suite).
type pendingStore struct {
	storage.Store
	waiting bool
	indexed int
}

type pendingRead struct {
	storage.ReadTx
	s *pendingStore
}

func (r pendingRead) PendingIndex() (int, error) {
	if r.s.waiting {
		return 1, nil
	}
	return r.ReadTx.PendingIndex()
}

type pendingWrite struct {
	storage.Tx
	s *pendingStore
}

func (w pendingWrite) IndexPending() (int, int, error) {
	w.s.waiting = false
	w.s.indexed++
	return w.Tx.IndexPending()
}

func (p *pendingStore) View(ctx context.Context, fn func(storage.ReadTx) error) error {
	return p.Store.View(ctx, func(tx storage.ReadTx) error { return fn(pendingRead{tx, p}) })
}

func (p *pendingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return p.Store.Update(ctx, func(tx storage.Tx) error { return fn(pendingWrite{tx, p}) })
}

// TestSearchIndexesPendingFirst: a search in a room with messages waiting
// to be indexed indexes them in a write of its own, then answers from the
// whole index; with none waiting it writes nothing.
func TestSearchIndexesPendingFirst(t *testing.T) {
	t.Parallel()
	tr := newTestRoom(t)
	alice := tr.attach("alice", "claude-code")
	tr.attach("bob", "codex")
	tr.send(alice, SendInput{To: []string{"bob"}, Kind: protocol.KindNote, Subject: "wombat sighting", Body: "by the shed"})
	ps := &pendingStore{Store: tr.Store, waiting: true}
	tr.Store = ps
	defer func() { tr.Store = ps.Store }()

	page, err := tr.Search(context.Background(), SearchQuery{Query: "wombat"})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("search: %v, %+v", err, page)
	}
	if ps.indexed != 1 || ps.waiting {
		t.Errorf("IndexPending ran %d times (waiting %v), want once", ps.indexed, ps.waiting)
	}
	fp := func() string {
		f, err := ps.Store.(fingerprinter).Fingerprint(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	before := fp()
	if _, err := tr.Search(context.Background(), SearchQuery{Query: "wombat"}); err != nil {
		t.Fatal(err)
	}
	if ps.indexed != 1 {
		t.Errorf("a search with nothing waiting ran IndexPending (%d times)", ps.indexed)
	}
	if fp() != before {
		t.Error("a search with nothing waiting changed the room")
	}
}
