package mcpserver

import (
	"context"
	"os"
	"time"

	"github.com/acc-go/acc/internal/watch"
	"github.com/acc-go/acc/internal/wording"
	"github.com/acc-go/acc/pkg/core"
	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const rosterURI = "acc://roster"

// subscribeRoster starts watching the room for the acc://roster
// subscription. The roster is public, so unlike acc://inbox it needs no
// session and writes nothing; a second subscribe changes nothing.
func (s *server) subscribeRoster() error {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if s.stopRoster == nil {
		ctx, cancel := context.WithCancel(s.life)
		s.stopRoster = cancel
		go s.watchRoster(ctx)
	}
	return nil
}

// openRoster opens the room for the roster watch, once its store exists:
// a room nobody attached to yet has no store (reads see an empty one), so
// it waits for the first attach to create it (waited). nil when ctx ended
// first.
func (s *server) openRoster(ctx context.Context) (r *core.Room, waited bool) {
	for {
		var err error
		r, err = s.watchRoom(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, false
			}
			s.logf("watch %s: %v", rosterURI, protocol.AsError(wording.MCPError(err)).Message)
			select {
			case <-ctx.Done():
				return nil, false
			case <-time.After(time.Second):
			}
			continue
		}
		if r.HasStore() {
			return r, waited
		}
		waited = true
		path := workspace.StorePath(r.DataHome, r.WS.ID)
		url, _ := core.StoreURL(r.WS, s.cfg.Getenv)
		r.Close()
		wctx, cancel := context.WithCancel(ctx)
		if url != "" {
			// A room on PostgreSQL appears on the server: look again every
			// second.
			select {
			case <-ctx.Done():
				cancel()
				return nil, false
			case <-time.After(time.Second):
			}
			cancel()
			continue
		}
		w := watch.Store(wctx, path)
		for {
			if _, err := os.Stat(path); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				cancel()
				return nil, false
			case <-w.C:
			}
		}
		cancel()
	}
}

// rosterState is the roster's fingerprint (core.Room.RosterDigest),
// bounded by storeWait.
func rosterState(ctx context.Context, r *core.Room) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	return r.RosterDigest(ctx)
}

// watchRoster sends notifications/resources/updated for acc://roster when
// the roster changes — a session joins or leaves it, its presence changes,
// or its hooks record the start or end of a turn (docs/mcp.md) — woken by
// the store's watcher (internal/watch; its backstop poll also sees
// presence lapse with time), until the subscription ends or the
// connection closes. A room that does not exist yet is waited for.
func (s *server) watchRoster(ctx context.Context) {
	r, waited := s.openRoster(ctx)
	if r == nil {
		return
	}
	defer r.Close()
	last, err := rosterState(ctx, r)
	if err != nil {
		s.logf("watch %s: %v", rosterURI, protocol.AsError(wording.MCPError(err)).Message)
	}
	if waited && last != "" {
		// The roster was empty at subscribe; the first session joined.
		if err := s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: rosterURI}); err != nil && ctx.Err() == nil {
			s.logf("notify %s: %v", rosterURI, err)
		}
	}
	s.notifyOnChange(ctx, r, rosterURI, last, func(ctx context.Context) (string, error) { return rosterState(ctx, r) })
}
