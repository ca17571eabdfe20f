package mcpserver

import (
	"context"
	"time"

	"github.com/acc-go/acc/internal/watch"
	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const inboxURI = "acc://inbox"

// subscribe accepts a subscription to acc://inbox (the only resource that
// changes for its reader) and starts watching the store for it. Like a
// read of the inbox, it resolves the participant first (docs/mcp.md#sessions), so that
// messages can be addressed to it while it waits; that is the only write,
// and it happens before the watch starts.
func (s *server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	if req.Params.URI == rosterURI {
		return s.subscribeRoster()
	}
	if req.Params.URI != inboxURI {
		return &jsonrpc.Error{Code: codeInvalidArgs, Message: "only acc://inbox and acc://roster can be subscribed to"}
	}
	if err := s.resolve(ctx); err != nil {
		return err
	}
	s.subMu.Lock()
	defer s.subMu.Unlock()
	// The SDK keeps one subscription per connection and URI, however often
	// it is asked: a second subscribe changes nothing.
	if s.stopWatch == nil {
		ctx, cancel := context.WithCancel(s.life)
		s.stopWatch = cancel
		go s.watchInbox(ctx)
	}
	return nil
}

func (s *server) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if req.Params.URI == inboxURI && s.stopWatch != nil {
		s.stopWatch()
		s.stopWatch = nil
	}
	if req.Params.URI == rosterURI && s.stopRoster != nil {
		s.stopRoster()
		s.stopRoster = nil
	}
	return nil
}

// resolve opens the room and the participant's session, as a read of
// acc://inbox does.
func (s *server) resolve(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	return s.open(ctx, true, func(r *core.Room) error {
		_, err := s.owner(ctx, r, true)
		return err
	})
}

// inboxState is what tells a reader its inbox changed: the participant's
// pending items of the first page, newest first, each with its receipt's
// state. It reads the participant's inbox rather than a session's, so a
// participant whose session finished still hears of what arrives.
func (s *server) inboxState(ctx context.Context, r *core.Room) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	return r.InboxDigest(ctx, s.cfg.Participant, core.DefaultPageLimit)
}

// watchRoom opens the room the watch reads, for as long as it runs: a
// store opened and closed on every wake-up would, as its last user,
// remove SQLite's -wal and -shm files, and that change would wake the
// watcher again.
func (s *server) watchRoom(ctx context.Context) (*core.Room, error) {
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	return core.Open(ctx, s.openOptions(false))
}

// watchInbox sends notifications/resources/updated for acc://inbox when
// the participant's pending page changes, woken by the store's watcher
// (internal/watch), until the subscription ends or the connection closes.
func (s *server) watchInbox(ctx context.Context) {
	var r *core.Room
	for {
		var err error
		if r, err = s.watchRoom(ctx); err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		// The store cannot be opened now (a server that is down, a lock
		// held past the wait): try again each second while subscribed.
		s.logf("watch %s: %v", inboxURI, protocol.AsError(wording.MCPError(err)).Message)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	defer r.Close()
	last, err := s.inboxState(ctx, r)
	if err != nil {
		s.logf("watch %s: %v", inboxURI, protocol.AsError(wording.MCPError(err)).Message)
	}
	s.notifyOnChange(ctx, r, inboxURI, last, func(ctx context.Context) (string, error) { return s.inboxState(ctx, r) })
}

// notifyOnChange watches r's store until ctx ends and sends
// notifications/resources/updated for uri each time state, read after a
// change of the store, differs from the last value (starting from last).
// A read that fails is logged and retried after a second.
func (s *server) notifyOnChange(ctx context.Context, r *core.Room, uri, last string, state func(context.Context) (string, error)) {
	w := watch.Room(ctx, r.Store, workspace.StorePath(r.DataHome, r.WS.ID), watch.Backstop)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.C:
		}
		now, err := state(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.logf("watch %s: %v", uri, protocol.AsError(wording.MCPError(err)).Message)
				time.Sleep(time.Second)
			}
			continue
		}
		if now != last {
			last = now
			if err := s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil && ctx.Err() == nil {
				s.logf("notify %s: %v", uri, err)
			}
		}
	}
}
