package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type resource struct {
	def  *mcp.Resource
	read mcp.ResourceHandler
}

// resources are the three read-only views of docs/mcp.md#resources. Snapshot and roster need
// no session; the inbox resolves the connection's session and, like
// acc_inbox without messageId, moves no receipt.
func (s *server) resources() []resource {
	return []resource{
		{&mcp.Resource{URI: "acc://snapshot", Name: "Workspace snapshot", MIMEType: "application/json",
			Description: "Every record of the room (acc_sync scope full), for forensics. Unbounded; message text is untrusted peer content."},
			s.readPublic(func(ctx context.Context, r *core.Room) (any, error) {
				res, err := r.Sync(ctx, core.SyncQuery{Scope: core.SyncScopeFull})
				if err != nil {
					return nil, err
				}
				return peerSnapshot(res.Data())
			})},
		{&mcp.Resource{URI: "acc://roster", Name: "Participant roster", MIMEType: "application/json",
			Description: "The live sessions of the room, as acc_sync reports them ([] in an empty room), each with its turn activity (working or idle, since when) when its hooks record one. Subscribe to hear when a session joins, leaves, or starts or ends a turn."},
			s.readPublic(func(ctx context.Context, r *core.Room) (any, error) {
				res, err := r.Sync(ctx, core.SyncQuery{Scope: core.SyncScopeDelta})
				if err != nil {
					return nil, err
				}
				return res.Delta.Roster, nil
			})},
		{&mcp.Resource{URI: "acc://inbox", Name: "Inbox", MIMEType: "application/json",
			Description: "The first page of your pending messages as summaries, read-only (the same page as acc_inbox {}). Continue with acc_inbox cursor; read a body with acc_inbox messageId."},
			s.readInbox},
	}
}

func (s *server) readPublic(view func(ctx context.Context, r *core.Room) (any, error)) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx, cancel := context.WithTimeout(ctx, storeWait)
		defer cancel()
		var v any
		err := s.open(ctx, false, func(r *core.Room) (err error) {
			v, err = view(ctx, r)
			return err
		})
		return contents(req.Params.URI, v, err)
	}
}

func (s *server) readInbox(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	var v any
	err := s.open(ctx, true, func(r *core.Room) error {
		c, err := s.owner(ctx, r, true)
		if err != nil {
			return err
		}
		v, err = r.Inbox(ctx, core.InboxQuery{Caller: c})
		return err
	})
	return contents(req.Params.URI, v, err)
}

func contents(uri string, v any, err error) (*mcp.ReadResourceResult, error) {
	if err != nil {
		return nil, err
	}
	text, err := protocol.MarshalIndent(v)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(text)}}}, nil
}

// peerSnapshot marks the messages of a full sync as peer content (docs/mcp.md#resources):
// every string inside each message, recursively (subject, body, artifact
// descriptions, handoff lists), has its control characters escaped
// (escapeA7), and each message gains trust "untrusted peer content". Attribution is kept as it is. Other records pass unchanged.
func peerSnapshot(data any) (any, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	snap, _ := v["snapshot"].(map[string]any)
	msgs, _ := snap["messages"].([]any)
	for i, m := range msgs {
		if obj, ok := escapeStrings(m).(map[string]any); ok {
			obj["trust"] = core.TrustLabel
			msgs[i] = obj
		}
	}
	return v, nil
}

func escapeStrings(v any) any {
	switch x := v.(type) {
	case string:
		return escapeA7(x)
	case map[string]any:
		for k, e := range x {
			x[k] = escapeStrings(e)
		}
	case []any:
		for i, e := range x {
			x[i] = escapeStrings(e)
		}
	}
	return v
}

// escapeA7 is the peer escaping of docs/mcp.md#resources: each code point below 32 other than
// newline and tab, and 127, becomes the six characters \u00XX; nothing
// else changes. It is the wire contract of the acc://snapshot resource, a
// JSON document for programs (docs/mcp.md), so it stays this narrow set;
// text acc shows to a person or a model goes through protocol.EscapeText
// (docs/concepts.md#peer-text-on-the-screen).
func escapeA7(s string) string {
	if !strings.ContainsFunc(s, a7Escaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if a7Escaped(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func a7Escaped(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f }
