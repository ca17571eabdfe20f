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
		return nil, nil, noRoomError(ws, env, err)
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
	ws, err := workspace.Discover(ctx, workspace.DiscoverOptions{Cwd: o.Cwd, ConfigPath: o.ConfigPath, Getenv: getenv})
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
// to start elsewhere — a protocol.StepRunInProject step that each surface
// words, naming ACC_WORKSPACE_ROOT when that chose the directory, since it
// overrides both the working directory and the start directory the caller
// passed.
func noRoomError(ws *workspace.Workspace, env *workspace.RuntimeEnv, containment error) error {
	if ws.Source != protocol.SourceDirectory {
		return containment
	}
	nr := env.WhyNoRoom(ws.Start, protocol.AsError(containment))
	start := protocol.Step{Command: protocol.StepRunInProject}
	if env.WorkspaceRoot != "" {
		start.Args = map[string]string{"variable": workspace.EnvWorkspaceRoot}
	}
	format := "no room here: %[1]s is not inside a Git repository or a directory with %[2]s, and it cannot be a room itself because %[3]s; %[4]s"
	if nr.Move != "" {
		format = "no room here: %[1]s is not inside a Git repository or a directory with %[2]s, and it cannot be a room itself because %[3]s; %[5]s; or %[4]s"
	}
	return protocol.Errorf(protocol.ReasonNoRoom, format, ws.Start, workspace.ConfigFileName, nr.Why, start, nr.Move).
		With("path", ws.Start).With("dataDir", nr.Dir)
}

// doctorNoRoom is acc doctor's next: line where no room is selected: how to
// point doctor at a project instead (see noRoomError).
func doctorNoRoom(ws *workspace.Workspace, env *workspace.RuntimeEnv, containment *protocol.Error) string {
	nr := env.WhyNoRoom(ws.Start, containment)
	doctor := "run `acc doctor` inside your project (a Git repository or a directory with acc.workspace.json), or pass --cwd DIR, to check its room"
	if env.WorkspaceRoot != "" {
		doctor = "ACC_WORKSPACE_ROOT selects " + ws.Start + ": set it to your project's directory (a Git repository or a directory with acc.workspace.json), or unset it, to check its room"
	}
	if nr.Move != "" {
		return nr.Move + "; or " + doctor
	}
	return doctor
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
		return protocol.AsError(noRoomError(ws, env, err))
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
