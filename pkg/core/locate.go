package core

import (
	"context"
	"errors"
	"os"
	"runtime"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
)

// locate is the part of Open that needs no store: the runtime environment,
// the workspace, and containment. A directory that is no room (see
// noRoomError) is no_room rather than runtime_inside_workspace.
func locate(ctx context.Context, o OpenOptions) (*workspace.Workspace, *workspace.RuntimeEnv, error) {
	ws, env, err := locateParts(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	if err := env.CheckContainment(ws); err != nil {
		return nil, nil, noRoomError(ws, env, err, o)
	}
	return ws, env, nil
}

// locateParts discovers the workspace and resolves the runtime environment,
// leaving containment to the caller.
func locateParts(ctx context.Context, o OpenOptions) (*workspace.Workspace, *workspace.RuntimeEnv, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = getenvOS
	}
	ws, err := workspace.Discover(ctx, workspace.DiscoverOptions{Cwd: o.Cwd, ConfigPath: o.ConfigPath, Getenv: getenv,
		StartFix: o.Front.Cmd("start acc in an existing directory (check --cwd and ACC_WORKSPACE_ROOT)", "set ACC_MCP_WORKSPACE to the project's existing directory")})
	if err != nil {
		return nil, nil, err
	}
	env, err := workspace.ResolveRuntimeEnv(goosOr(o.GOOS), getenv)
	if err != nil {
		return nil, nil, err
	}
	return ws, env, nil
}

// noRoomError turns a containment refusal (runtime_inside_workspace) into
// no_room (exit 2) when the workspace is only the start directory itself
// (source directory: no Git work tree, no acc.workspace.json above it). Such
// a directory — the home directory, or / — is not a project that was
// misconfigured: it holds acc's data, so it cannot be a room, and there is
// no room here. A Git or config workspace whose root holds acc's data keeps
// runtime_inside_workspace: that is a real misconfiguration
// (docs/configuration.md#no-room-here).
//
// The message names what lies inside the directory (acc's data, or its
// configuration or cache when ACC_CONFIG_HOME or ACC_CACHE_HOME puts it
// there) and the fixes that work: the variable that put it there, and how
// to start elsewhere (ACC_WORKSPACE_ROOT when that chose the directory,
// since it overrides both the working directory and --cwd).
func noRoomError(ws *workspace.Workspace, env *workspace.RuntimeEnv, containment error, o OpenOptions) error {
	if ws.Source != protocol.SourceDirectory {
		return containment
	}
	pe := protocol.AsError(containment)
	nr := explainNoRoom(ws, env, pe, o.Front)
	return protocol.Errorf(protocol.ReasonNoRoom,
		"no room here: %s is not inside a Git repository or a directory with %s, and it cannot be a room itself because %s; %s",
		ws.Start, workspace.ConfigFileName, nr.Why, nr.fix).With("path", ws.Start).With("dataDir", nr.Dir)
}

// noRoom is why a directory cannot be a room and what to do about it.
type noRoom struct {
	workspace.NoRoom
	// fix is the remedy for a room command, doctor the one for acc
	// doctor's next: line.
	fix, doctor string
}

// explainNoRoom words a no_room refusal from the containment refusal pe
// (see noRoomError).
func explainNoRoom(ws *workspace.Workspace, env *workspace.RuntimeEnv, pe *protocol.Error, front Front) noRoom {
	nr := noRoom{NoRoom: env.WhyNoRoom(ws.Start, pe)}
	// Where to start instead: ACC_WORKSPACE_ROOT, when set, overrides the
	// working directory and --cwd alike (acc-mcp never reads it).
	start := front.Cmd("run acc inside your project (or pass --cwd DIR)", "set ACC_MCP_WORKSPACE to your project's directory")
	doctor := "run `acc doctor` inside your project (a Git repository or a directory with acc.workspace.json), or pass --cwd DIR, to check its room"
	if env.WorkspaceRoot != "" && front != FrontMCP {
		start = "set ACC_WORKSPACE_ROOT to your project's directory, or unset it (it overrides the working directory and --cwd)"
		doctor = "ACC_WORKSPACE_ROOT selects " + ws.Start + ": set it to your project's directory (a Git repository or a directory with acc.workspace.json), or unset it, to check its room"
	}
	nr.fix, nr.doctor = start, doctor
	if nr.Move != "" {
		nr.fix, nr.doctor = nr.Move+"; or "+start, nr.Move+"; or "+doctor
	}
	return nr
}

// CheckRoomHere reports why the workspace that o selects cannot be a room
// because of where acc's data lies: the refusal a room command gives there
// (no_room or runtime_inside_workspace), or nil when there is none — also
// when the workspace or the environment cannot be resolved, which every
// command reports by itself. It reads only; acc config validate uses it to
// say that there is no room (docs/configuration.md#no-room-here).
func CheckRoomHere(ctx context.Context, o OpenOptions) *protocol.Error {
	ws, env, err := locateParts(ctx, o)
	if err != nil {
		return nil
	}
	if err := env.CheckContainment(ws); err != nil {
		return protocol.AsError(noRoomError(ws, env, err, o))
	}
	return nil
}

func getenvOS(k string) string { return os.Getenv(k) }

func goosOr(goos string) string {
	if goos == "" {
		return runtime.GOOS
	}
	return goos
}

// errText returns the operating system's words for err without the path
// that os errors repeat.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}
