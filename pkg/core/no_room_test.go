package core

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
)

// A plain directory that holds acc's data (a home directory) is no room:
// Open says no_room, and Doctor reports without a room and without an
// error. A Git or config workspace holding acc's data stays a
// misconfiguration (runtime_inside_workspace). None of them writes anything.
func TestNoRoomInAHomeDirectory(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	home := filepath.Join(base, "home")
	mustMkdir(t, home)
	env := map[string]string{"HOME": home} // the data home defaults to home/.local/share
	opts := OpenOptions{Cwd: home, Getenv: envMap(env), GOOS: "linux"}

	_, err := Open(context.Background(), opts)
	wantReason(t, err, protocol.ReasonNoRoom, protocol.ExitUsage)
	assertOneLine(t, err)
	msg := err.Error()
	for _, want := range []string{"no room here: " + home + " ", "not inside a Git repository or a directory with acc.workspace.json",
		filepath.Join(home, ".local", "share", "acc"), "{step run-in-project}"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}
	if d := protocol.AsError(err).Details; d["path"] != home {
		t.Fatalf("details %v", d)
	}

	// Also from a subdirectory that is no project: the subdirectory would be
	// the room and does not hold the data home, so it is one (as before).
	sub := filepath.Join(home, "notes")
	mustMkdir(t, sub)
	r, err := Open(context.Background(), OpenOptions{Cwd: sub, Getenv: envMap(env), GOOS: "linux", NoCreate: true})
	if err != nil {
		t.Fatalf("a plain directory without acc's data is a room: %v", err)
	}
	if r.WS.Source != protocol.SourceDirectory {
		t.Fatalf("source %s", r.WS.Source)
	}
	r.Close()

	// The fix is a step each surface words (internal/wording): run acc
	// inside the project; no variable chose this directory.
	_, err = Open(context.Background(), opts)
	if steps := protocol.AsError(err).Details["nextSteps"]; !reflect.DeepEqual(steps, []protocol.Step{{Command: protocol.StepRunInProject}}) {
		t.Fatalf("next steps %#v", steps)
	}

	rep, err := Doctor(context.Background(), DoctorOptions{OpenOptions: opts})
	if err != nil {
		t.Fatalf("doctor outside a room: %v", err)
	}
	if !rep.Healthy || rep.DoctorRoom != nil || rep.NoRoom == nil || rep.NoRoom.ReasonCode != protocol.ReasonNoRoom || rep.NoRoom.Start != home {
		t.Fatalf("report %+v (noRoom %+v)", rep, rep.NoRoom)
	}
	wantData := DoctorDataHome{Path: filepath.Join(home, ".local", "share"), AccDir: filepath.Join(home, ".local", "share", "acc")}
	if rep.DataHome != wantData {
		t.Fatalf("data home %+v, want %+v", rep.DataHome, wantData)
	}
	if len(rep.Remediation) != 1 || !strings.Contains(rep.Remediation[0], "--cwd DIR") {
		t.Fatalf("remediation %q", rep.Remediation)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 1 || entries[0].Name() != "notes" {
		t.Fatalf("the home changed: %v", entries)
	}

	// Once the data home exists, doctor says so.
	mustMkdir(t, wantData.AccDir)
	rep, err = Doctor(context.Background(), DoctorOptions{OpenOptions: opts})
	if err != nil || !rep.DataHome.Exists || !rep.DataHome.AccDirExists {
		t.Fatalf("data home %+v, err %v", rep.DataHome, err)
	}
}

func TestRootDirectoryIsNoRoom(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	env := map[string]string{"HOME": base}
	if ws, err := workspace.Discover(context.Background(), workspace.DiscoverOptions{Cwd: "/", Getenv: envMap(env)}); err != nil || ws.Source != protocol.SourceDirectory {
		t.Skipf("/ is not a plain directory on this machine (%v)", err)
	}
	_, err := Open(context.Background(), OpenOptions{Cwd: "/", Getenv: envMap(env), GOOS: "linux"})
	wantReason(t, err, protocol.ReasonNoRoom, protocol.ExitUsage)
}

func TestProjectHoldingTheDataHomeIsStillAMisconfiguration(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	repo := filepath.Join(base, "repo")
	newRepo(t, repo)
	cfgDir := filepath.Join(base, "cfg")
	mustWrite(t, filepath.Join(cfgDir, workspace.ConfigFileName), `{"schemaVersion": 1, "workspaceId": "workspace_cfg"}`)
	for _, dir := range []string{repo, cfgDir} {
		env := map[string]string{"HOME": dir} // the default data home lies inside the project
		opts := OpenOptions{Cwd: dir, Getenv: envMap(env), GOOS: "linux"}
		_, err := Open(context.Background(), opts)
		wantReason(t, err, protocol.ReasonRuntimeInsideWorkspace, protocol.ExitUsage)

		rep, err := Doctor(context.Background(), DoctorOptions{OpenOptions: opts})
		wantReason(t, err, protocol.ReasonRuntimeInsideWorkspace, protocol.ExitUsage)
		if rep == nil || rep.Healthy || rep.DoctorRoom != nil || rep.NoRoom == nil || rep.NoRoom.ReasonCode != protocol.ReasonRuntimeInsideWorkspace {
			t.Fatalf("%s: report %+v", dir, rep)
		}
		if protocol.AsError(err).Details["report"] != rep {
			t.Fatalf("%s: the error does not carry the report", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, ".local")); !os.IsNotExist(err) {
			t.Fatalf("%s: something was created: %v", dir, err)
		}
	}
}

// The no_room refusal names the fix that works: ACC_WORKSPACE_ROOT when it
// chose the directory (it overrides the working directory and --cwd), and
// the variable that put acc's directory inside it, naming which of acc's
// directories that is. Doctor's next step says the same.
func TestNoRoomNamesTheFixThatWorks(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	home := filepath.Join(base, "home")
	plain := filepath.Join(base, "plain")
	mustMkdir(t, home)
	mustMkdir(t, plain)
	for _, c := range []struct {
		name string
		env  map[string]string
		cwd  string
		want []string
		not  []string
		// doctor is what doctor's next: line must hold.
		doctor []string
		// variable is the variable the run-in-project step names: the one
		// that chose the directory, if any.
		variable string
	}{
		{
			name: "ACC_WORKSPACE_ROOT chose the home directory",
			env:  map[string]string{"HOME": home, workspace.EnvWorkspaceRoot: home},
			cwd:  plain,
			want: []string{"no room here: " + home + " ", "acc keeps its data inside it (" + filepath.Join(home, ".local", "share", "acc") + ")",
				"{step run-in-project}"},
			variable: workspace.EnvWorkspaceRoot,
			doctor:   []string{"ACC_WORKSPACE_ROOT selects " + home, "set it to your project's directory", "or unset it"},
		},
		{
			name:   "ACC_DATA_HOME inside a plain directory",
			env:    map[string]string{"HOME": home, workspace.EnvDataHome: filepath.Join(plain, "data")},
			cwd:    plain,
			want:   []string{"because ACC_DATA_HOME puts acc's data inside it (" + filepath.Join(plain, "data", "acc") + ")", "set ACC_DATA_HOME to an absolute directory outside " + plain, "{step run-in-project}"},
			not:    []string{"acc keeps its data inside it"},
			doctor: []string{"set ACC_DATA_HOME to an absolute directory outside " + plain},
		},
		{
			name:   "XDG_DATA_HOME inside a plain directory",
			env:    map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(plain, "xdg")},
			cwd:    plain,
			want:   []string{"because XDG_DATA_HOME puts acc's data inside it (" + filepath.Join(plain, "xdg", "acc") + ")", "set ACC_DATA_HOME (or XDG_DATA_HOME) to an absolute directory outside " + plain},
			doctor: []string{"set ACC_DATA_HOME (or XDG_DATA_HOME)"},
		},
		{
			name:   "ACC_CONFIG_HOME inside a plain directory",
			env:    map[string]string{"HOME": home, workspace.EnvConfigHome: filepath.Join(plain, "cfg")},
			cwd:    plain,
			want:   []string{"because ACC_CONFIG_HOME puts acc's configuration inside it (" + filepath.Join(plain, "cfg", "acc") + ")", "set ACC_CONFIG_HOME to an absolute directory outside " + plain + ", or unset it"},
			not:    []string{"keeps its data", "acc's data"},
			doctor: []string{"set ACC_CONFIG_HOME to an absolute directory outside " + plain + ", or unset it"},
		},
		{
			name: "ACC_CACHE_HOME inside a plain directory",
			env:  map[string]string{"HOME": home, workspace.EnvCacheHome: filepath.Join(plain, "cache")},
			cwd:  plain,
			want: []string{"because ACC_CACHE_HOME puts acc's cache inside it (" + filepath.Join(plain, "cache", "acc") + ")"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := OpenOptions{Cwd: c.cwd, Getenv: envMap(c.env), GOOS: "linux"}
			_, err := Open(context.Background(), opts)
			wantReason(t, err, protocol.ReasonNoRoom, protocol.ExitUsage)
			assertOneLine(t, err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			want := protocol.Step{Command: protocol.StepRunInProject}
			if c.variable != "" {
				want.Args = map[string]string{"variable": c.variable}
			}
			if steps := protocol.AsError(err).Details["nextSteps"]; !reflect.DeepEqual(steps, []protocol.Step{want}) {
				t.Errorf("next steps %#v, want %#v", steps, want)
			}
			for _, w := range c.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("message %q holds %q", err, w)
				}
			}
			rep, err := Doctor(context.Background(), DoctorOptions{OpenOptions: opts})
			if err != nil || rep.NoRoom == nil || len(rep.Remediation) != 1 {
				t.Fatalf("doctor: %v, %+v", err, rep)
			}
			for _, w := range c.doctor {
				if !strings.Contains(rep.Remediation[0], w) {
					t.Errorf("doctor's next step %q lacks %q", rep.Remediation[0], w)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(plain); len(entries) != 0 {
		t.Fatalf("something was created: %v", entries)
	}
}

// A directory inside acc's own data (such as <data home>/acc/workspaces,
// where the stores live) is no room: acc would keep its data, even the
// room's own store, inside the room. A Git repository there is refused as
// runtime_inside_workspace. Nothing is written.
func TestNoRoomInsideAccsData(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	home := filepath.Join(base, "home")
	acc := filepath.Join(home, ".local", "share", "acc")
	workspaces := filepath.Join(acc, "workspaces")
	mustMkdir(t, workspaces)
	env := map[string]string{"HOME": home}
	for _, dir := range []string{acc, workspaces} {
		opts := OpenOptions{Cwd: dir, Getenv: envMap(env), GOOS: "linux"}
		_, err := Open(context.Background(), opts)
		wantReason(t, err, protocol.ReasonNoRoom, protocol.ExitUsage)
		assertOneLine(t, err)
		want := "no room here: " + dir + " is not inside a Git repository"
		if dir == workspaces {
			want = "it cannot be a room itself because it lies inside acc's own data (" + acc + "); {step run-in-project}"
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: message %q lacks %q", dir, err, want)
		}
		rep, err := Doctor(context.Background(), DoctorOptions{OpenOptions: opts})
		if err != nil || rep.NoRoom == nil || rep.NoRoom.ReasonCode != protocol.ReasonNoRoom || !rep.Healthy {
			t.Fatalf("%s: doctor %v, %+v", dir, err, rep)
		}
	}
	repo := filepath.Join(acc, "evidence", "repo")
	newRepo(t, repo)
	_, err := Open(context.Background(), OpenOptions{Cwd: repo, Getenv: envMap(env), GOOS: "linux"})
	wantReason(t, err, protocol.ReasonRuntimeInsideWorkspace, protocol.ExitUsage)
	if !strings.Contains(err.Error(), "workspace root "+repo+" lies inside acc's data directory "+acc) {
		t.Fatalf("message %q", err)
	}
	if entries, _ := os.ReadDir(workspaces); len(entries) != 0 {
		t.Fatalf("something was created in %s: %v", workspaces, entries)
	}
}
