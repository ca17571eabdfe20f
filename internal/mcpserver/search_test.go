package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/storage"
)

func TestSearchTool(t *testing.T)         { searchTool_(t, newRoom(t)) }
func TestSearchToolPostgres(t *testing.T) { searchTool_(t, newRoomPG(t)) }

// storeDigest is the room's records: its data home's files on SQLite, the
// room's rows on PostgreSQL.
func (r *room) storeDigest() string {
	r.t.Helper()
	if r.pgID == "" {
		return r.fingerprint()
	}
	st, err := storage.OpenPostgres(context.Background(), r.extraEnv["ACC_STORE_URL"], r.pgID, storage.PostgresOptions{NoCreate: true})
	if err != nil {
		r.t.Fatal(err)
	}
	defer st.Close()
	fp, err := st.Fingerprint(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return fp
}

// searchTool_: acc_search finds what the CLI sent, with its filters and
// cursor, on either engine; its refusals carry their exit code and reason
// and change nothing.
func searchTool_(t *testing.T, r *room) {
	c := startBinary(t, r, "research")
	c.initialize("2025-06-18")
	c.ok("acc_status", map[string]any{})
	alice := r.acc("attach", "--participant", "alice")
	as := []string{"--session", alice["sessionId"].(string), "--generation", alice["generation"].(string)}
	q := r.acc(append([]string{"message", "--to", "research", "--type", "question", "--subject", "auth tokens", "--body", "Should we rotate the auth tokens before the refresh flow ships?"}, as...)...)
	qid := q["message"].(map[string]any)["messageId"].(string)
	d := r.acc(append([]string{"message", "--type", "decision", "--subject", "Migration 0042 renames the tokens table", "--body", "decided"}, as...)...)
	did := d["message"].(map[string]any)["messageId"].(string)
	lunch := c.ok("acc_message", map[string]any{"to": []any{"alice"}, "subject": "lunch", "body": "noodles at noon"})["message"].(map[string]any)["messageId"].(string)

	ids := func(page map[string]any) []string {
		var out []string
		for _, it := range page["items"].([]any) {
			out = append(out, it.(map[string]any)["message"].(map[string]any)["messageId"].(string))
		}
		return out
	}
	page := c.ok("acc_search", map[string]any{"query": "tokens"})
	if got := ids(page); len(got) != 2 {
		t.Fatalf("tokens: %v", page)
	}
	hit := c.ok("acc_search", map[string]any{"query": `"refresh flow" -lunch`})
	items := hit["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("refresh flow: %v", hit)
	}
	snip := items[0].(map[string]any)["snippet"].(map[string]any)
	if snip["field"] != "body" || !strings.Contains(snip["text"].(string), "refresh flow") || len(snip["highlights"].([]any)) != 2 {
		t.Errorf("snippet: %v", snip)
	}
	for _, c2 := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"query": "tokens", "kind": "decision"}, []string{did}},
		{map[string]any{"query": "tokens", "kind": "decision", "current": true}, []string{did}},
		{map[string]any{"query": "tokens", "to": "research"}, []string{qid}},
		{map[string]any{"query": "tok*", "from": []any{"alice"}, "thread": qid}, []string{qid}},
		{map[string]any{"query": "noodles", "from": []any{"research"}}, []string{lunch}},
		{map[string]any{"query": "noodles", "from": []any{"alice"}}, nil},
		{map[string]any{"query": "tokens", "until": "2020-01-01T00:00:00Z"}, nil},
		{map[string]any{"query": "tokens", "since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}, nil},
	} {
		got := ids(c.ok("acc_search", c2.args))
		if c2.want == nil && c2.args["since"] != nil {
			c2.want = []string{did, qid}
			if len(got) == 2 && got[0] != did {
				c2.want = []string{qid, did}
			}
		}
		if strings.Join(got, ",") != strings.Join(c2.want, ",") {
			t.Errorf("%v: %v, want %v", c2.args, got, c2.want)
		}
	}
	first := c.ok("acc_search", map[string]any{"query": "tokens", "limit": 1})
	cur, _ := first["nextCursor"].(string)
	rest := c.ok("acc_search", map[string]any{"query": "tokens", "limit": 1, "cursor": cur})
	if all := append(ids(first), ids(rest)...); cur == "" || len(all) != 2 || all[0] == all[1] || rest["nextCursor"] != nil {
		t.Errorf("pages: %v then %v", first, rest)
	}

	before := r.storeDigest()
	for _, bad := range []struct {
		args   map[string]any
		suffix string
	}{
		{map[string]any{"query": "a(b"}, "(usage, search_query_invalid)"},
		{map[string]any{"query": "   "}, "(usage, search_query_invalid)"},
		{map[string]any{"query": "tokens", "cursor": "not a cursor"}, "(usage, invalid_cursor)"},
		{map[string]any{"query": "tokens", "cursor": "message_AAAAAAAAAAAAAAAAAAAAAA"}, "(usage, invalid_cursor)"},
		{map[string]any{"query": "noodles", "cursor": qid}, "(usage, invalid_cursor)"},
		{map[string]any{"query": "tokens", "from": []any{"carol"}}, "(data, unknown_recipient)"},
		{map[string]any{"query": "tokens", "to": "carol"}, "(data, unknown_recipient)"},
		{map[string]any{"query": "tokens", "since": "yesterday"}, "(usage, invalid_argument)"},
		{map[string]any{"query": "tokens", "kind": "decision", "current": "yes"}, "(usage, invalid_argument)"},
		{map[string]any{}, "arguments.query"},
	} {
		_, isErr, text := c.tool("acc_search", bad.args)
		if !isErr || !strings.HasPrefix(text, "acc_search: ") || !strings.Contains(text, bad.suffix) {
			t.Errorf("%v: isError %v, %q; want %s", bad.args, isErr, text, bad.suffix)
		}
	}
	if after := r.storeDigest(); after != before {
		t.Error("a search changed the store")
	}
}
