package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/workspace"
)

// MaxGuardRooms is the most rooms one guarded call is checked in, the
// room of the client's directory included
// (docs/hooks.md#targets-in-other-rooms): a call writing into more is denied,
// since acc could not look at all of them within the hook's budget.
const MaxGuardRooms = 8

// RoomsInput is a write a hooked client is about to make, whose targets
// may lie in several rooms.
type RoomsInput struct {
	// GuardInput is the write as the room of the client's directory sees
	// it: SessionID is the writer there ("" when unbound), Unknown applies
	// to that room only.
	GuardInput
	// Adapter and ClientSessionID name the writing client: in every other
	// room, the session bound to them there (HookCaller) is the writer, and
	// without such a binding every claim there is someone else's.
	Adapter, ClientSessionID string
	// Getenv reads the environment (the data home; ACC_WORKSPACE_ROOT is
	// not read for targets: it chooses the client's room, not theirs); nil
	// means os.Getenv.
	Getenv func(string) string
}

// CheckWriteRooms decides a write whose targets may lie outside the room
// of the client's directory: each target is checked in the room that
// holds it (docs/hooks.md#targets-in-other-rooms).
//
// here is that room, or nil when the client's directory is in no room; it
// is checked first with CheckWrite, as before. Then every target is
// resolved to an absolute physical path (relative ones against in.Cwd;
// symlinks through the deepest existing ancestor, ".." as the kernel
// walks it) and its room is discovered from the deepest existing directory
// holding it, as any command started there would discover it (Discover,
// without ACC_WORKSPACE_ROOT, then the containment rule: a path inside
// acc's own data is in no room). Targets whose room is not here and has a
// store are grouped by room and checked there with CheckWrite; a room
// without a store has no claims and is not created. The first room that
// denies gives the decision, its reason naming that room's workspace.
// Targets in no room are allowed and listed in Outside.
//
// The work is bounded: at most MaxGuardRooms rooms per call, and target
// rooms are looked up only until the last second of ctx's deadline (the
// reserve CheckWrite keeps); past either bound the call is denied with a
// reason that says to split it, since acc cannot tell that it stays clear
// of every guarded claim. in.Unknown is judged in here only; a hidden
// write is judged here and, by each absolute hint, in the room that hint
// lies in.
//
// Errors: a room that cannot be read (its config or its store) is
// returned as is, as opening the room of the directory would: the hook
// then fails open (docs/hooks.md).
func CheckWriteRooms(ctx context.Context, here *Room, in RoomsInput) (*GuardDecision, error) {
	getenv := in.Getenv
	if getenv == nil {
		getenv = getenvOS
	}
	d := &GuardDecision{Resources: []string{}, Unknown: in.Unknown}
	env := (*workspace.RuntimeEnv)(nil)
	if here != nil {
		var err error
		if d, err = here.CheckWrite(ctx, in.GuardInput); err != nil || d.Deny {
			return d, err
		}
		env = here.Env
	}
	if len(in.Targets) == 0 && !absoluteHints(in.Hidden) {
		return d, nil
	}
	if env == nil {
		var err error
		if env, err = workspace.ResolveRuntimeEnv(goosOr(""), getenv); err != nil {
			return nil, err
		}
	}
	f := roomFinder{ctx: ctx, env: env, acc: workspace.PhysicalPath(workspace.AccDir(env.DataHome)), known: map[string]*foundRoom{},
		getenv: func(k string) string {
			if k == workspace.EnvWorkspaceRoot {
				return ""
			}
			return getenv(k)
		}}
	if here != nil {
		f.hereID = here.WS.ID
		if env.WorkspaceRoot == "" {
			// The client's own directory discovers the room it opened.
			f.known[here.WS.Start] = &foundRoom{ws: here.WS}
		}
	}
	stop := time.Time{}
	if dl, ok := ctx.Deadline(); ok {
		stop = dl.Add(-guardStoreReserve)
	}
	var rooms []*foundRoom
	elsewhere := map[string]bool{} // targets judged in another room
	for _, t := range in.Targets {
		if t == "" {
			continue
		}
		if !stop.IsZero() && time.Now().After(stop) {
			return f.deny(d, fmt.Sprintf("its %d write targets took longer to place in their rooms than the hook's budget allows", len(in.Targets))), nil
		}
		abs := t
		if !filepath.IsAbs(abs) {
			if !filepath.IsAbs(in.Cwd) {
				continue
			}
			// As canonicalFile: the kernel climbs ".." from where a link led.
			abs = in.Cwd + string(filepath.Separator) + t
		}
		path := workspace.PhysicalPath(abs)
		fr, err := f.roomOf(path)
		if err != nil {
			return nil, err
		}
		if fr == nil || fr.ws.ID == f.hereID {
			continue
		}
		if len(fr.targets) == 0 {
			rooms = append(rooms, fr)
			n := len(rooms)
			if here != nil {
				n++
			}
			if n > MaxGuardRooms {
				return f.deny(d, fmt.Sprintf("it writes into more than %d rooms and acc checks at most that many per call", MaxGuardRooms)), nil
			}
		}
		fr.targets = append(fr.targets, path)
		elsewhere[t] = true
	}
	// A hidden write whose hint names a path in another room (python3 -c
	// "open('/other/repo/src/a.go','w')") is judged there too, by that
	// hint: it could reach a claim there.
	for _, h := range in.Hidden {
		for _, hint := range h.Hints {
			if !filepath.IsAbs(hint) {
				continue
			}
			path := workspace.PhysicalPath(filepath.Clean(hint))
			fr, err := f.roomOf(path)
			if err != nil {
				return nil, err
			}
			if fr == nil || fr.ws.ID == f.hereID {
				continue
			}
			if len(fr.targets) == 0 && len(fr.hidden) == 0 {
				rooms = append(rooms, fr)
				n := len(rooms)
				if here != nil {
					n++
				}
				if n > MaxGuardRooms {
					return f.deny(d, fmt.Sprintf("it writes into more than %d rooms and acc checks at most that many per call", MaxGuardRooms)), nil
				}
			}
			fr.hidden = append(fr.hidden, HiddenWrite{Why: h.Why, Hints: dedupeStrings([]string{hint, path})})
		}
	}
	for _, fr := range rooms {
		rd, err := f.check(fr, in)
		if err != nil {
			return nil, err
		}
		if rd.Deny {
			rd.WorkspaceID = fr.ws.ID
			rd.Reason = fmt.Sprintf("acc: this write lands in another workspace, %s at %s: %s",
				protocol.EscapeText(fr.ws.DisplayName, protocol.TextLine), protocol.EscapeText(fr.ws.CheckoutRoot(), protocol.TextLine),
				strings.TrimPrefix(rd.Reason, "acc: "))
			rd.Unknown = d.Unknown
			return rd, nil
		}
	}
	if len(elsewhere) > 0 {
		outside := d.Outside[:0:0]
		for _, t := range d.Outside {
			if !elsewhere[t] {
				outside = append(outside, t)
			}
		}
		d.Outside = outside
	}
	if here == nil {
		for _, t := range in.Targets {
			if t != "" && !elsewhere[t] {
				d.Outside = append(d.Outside, t)
			}
		}
	}
	return d, nil
}

// foundRoom is a room a target lies in: its workspace and, once grouped,
// the targets checked there (absolute physical paths).
type foundRoom struct {
	ws      *workspace.Workspace
	targets []string
	hidden  []HiddenWrite // hidden writes whose hint names a path here
}

// absoluteHints reports whether a hidden write has an absolute hint, one
// that may name a path in another room.
func absoluteHints(hidden []HiddenWrite) bool {
	for _, h := range hidden {
		for _, hint := range h.Hints {
			if filepath.IsAbs(hint) {
				return true
			}
		}
	}
	return false
}

// dedupeStrings drops repeats from list, keeping the first of each.
func dedupeStrings(list []string) []string {
	out := list[:0:0]
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// roomFinder places targets in their rooms for CheckWriteRooms, each
// directory discovered once.
type roomFinder struct {
	ctx    context.Context
	env    *workspace.RuntimeEnv
	getenv func(string) string
	acc    string // canonical acc directory of the data home: in no room
	hereID string // the room already checked ("" when none)
	// known maps a directory to the room discovered from it (nil: none,
	// or a room with no store, hence no claims); rooms by workspace id.
	known map[string]*foundRoom
	byID  map[string]*foundRoom
}

// roomOf returns the room holding path (absolute, physical), or nil.
func (f *roomFinder) roomOf(path string) (*foundRoom, error) {
	if workspace.PathWithin(path, f.acc) {
		return nil, nil
	}
	dir := existingDir(path)
	if dir == "" {
		return nil, nil
	}
	if fr, ok := f.known[dir]; ok {
		return fr, nil
	}
	fr, err := f.discover(dir)
	if err != nil {
		return nil, err
	}
	f.known[dir] = fr
	return fr, nil
}

// discover finds the room of dir as a command started there would, or nil
// when dir is in no room or its room has no store yet.
func (f *roomFinder) discover(dir string) (*foundRoom, error) {
	ws, err := workspace.Discover(f.ctx, workspace.DiscoverOptions{Cwd: dir, Getenv: f.getenv})
	if err != nil {
		return nil, err
	}
	if f.env.CheckContainment(ws) != nil {
		// acc's data lies in it, or it in acc's data: no room.
		return nil, nil
	}
	if ws.ID == f.hereID {
		return &foundRoom{ws: ws}, nil
	}
	if fr := f.byID[ws.ID]; fr != nil {
		return fr, nil
	}
	if url, err := StoreURL(ws, f.getenv); err != nil {
		return nil, err
	} else if url == "" {
		if _, err := os.Stat(workspace.StorePath(f.env.DataHome, ws.ID)); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	fr := &foundRoom{ws: ws}
	if f.byID == nil {
		f.byID = map[string]*foundRoom{}
	}
	f.byID[ws.ID] = fr
	return fr, nil
}

// check opens fr's store read-only (never creating it) and decides its
// targets there, the writer being the session bound to the client there.
func (f *roomFinder) check(fr *foundRoom, in RoomsInput) (*GuardDecision, error) {
	st, err := openStore(f.ctx, fr.ws, f.env, f.getenv, storeExisting)
	if errors.Is(err, storage.ErrRoomNotCreated) {
		// A room on PostgreSQL that nobody attached to yet holds no claim.
		return &GuardDecision{}, nil
	}
	if err != nil {
		return nil, err
	}
	room := newRoom(fr.ws, st, f.env)
	defer room.Close()
	writer := ""
	if in.Adapter != "" && in.ClientSessionID != "" {
		c, err := room.HookCaller(f.ctx, in.Adapter, in.ClientSessionID)
		if err != nil {
			return nil, err
		}
		if c != nil {
			writer = c.SessionID
		}
	}
	return room.CheckWrite(f.ctx, GuardInput{SessionID: writer, Cwd: fr.ws.Start, Targets: fr.targets,
		Hidden: fr.hidden, HintReaches: in.HintReaches})
}

// deny turns d into the refusal of a call whose targets could not all be
// placed in their rooms.
func (f *roomFinder) deny(d *GuardDecision, why string) *GuardDecision {
	d.Deny = true
	d.Reason = "acc: this call was not run: acc cannot check all of its write targets (" + why + "); " +
		"split it into smaller commands that each write into one project, so that acc can check them"
	return d
}

// existingDir returns path (absolute) when it is an existing directory
// (`rm -r B` writes into B's room), else the deepest existing directory
// holding it; "" when none can be read.
func existingDir(path string) string {
	for p := path; ; p = filepath.Dir(p) {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			return p
		}
		if filepath.Dir(p) == p {
			return ""
		}
	}
}
