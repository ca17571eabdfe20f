package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

func TestResolveDataHome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		goos   string
		env    map[string]string
		want   string
		reason string // "" means success
	}{
		{"linux default", "linux", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share", ""},
		{"linux xdg", "linux", map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "/data/xdg"}, "/data/xdg", ""},
		{"linux xdg without home", "linux", map[string]string{"XDG_DATA_HOME": "/data/xdg"}, "/data/xdg", ""},
		{"linux xdg cleaned", "linux", map[string]string{"XDG_DATA_HOME": "/data//xdg/"}, "/data/xdg", ""},
		{"linux xdg relative refused", "linux", map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "rel/xdg"}, "", protocol.ReasonPathNotAbsolute},
		{"linux empty xdg is unset", "linux", map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": ""}, "/home/u/.local/share", ""},
		{"linux acc wins over xdg", "linux", map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "/x", "ACC_DATA_HOME": "/acc/home"}, "/acc/home", ""},
		{"linux acc wins over relative xdg", "linux", map[string]string{"XDG_DATA_HOME": "rel", "ACC_DATA_HOME": "/acc/home"}, "/acc/home", ""},
		{"linux acc relative refused", "linux", map[string]string{"HOME": "/home/u", "ACC_DATA_HOME": "acc"}, "", protocol.ReasonPathNotAbsolute},
		{"linux no home", "linux", map[string]string{}, "", protocol.ReasonHomeMissing},
		{"linux relative home", "linux", map[string]string{"HOME": "home/u"}, "", protocol.ReasonPathNotAbsolute},
		{"freebsd follows xdg", "freebsd", map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "/x"}, "/x", ""},
		{"darwin default", "darwin", map[string]string{"HOME": "/Users/u"}, "/Users/u/Library/Application Support", ""},
		{"darwin ignores xdg", "darwin", map[string]string{"HOME": "/Users/u", "XDG_DATA_HOME": "/x"}, "/Users/u/Library/Application Support", ""},
		{"darwin ignores relative xdg", "darwin", map[string]string{"HOME": "/Users/u", "XDG_DATA_HOME": "rel"}, "/Users/u/Library/Application Support", ""},
		{"darwin acc", "darwin", map[string]string{"HOME": "/Users/u", "ACC_DATA_HOME": "/acc"}, "/acc", ""},
		{"darwin acc relative refused", "darwin", map[string]string{"HOME": "/Users/u", "ACC_DATA_HOME": "./acc"}, "", protocol.ReasonPathNotAbsolute},
		{"darwin no home", "darwin", map[string]string{"XDG_DATA_HOME": "/x"}, "", protocol.ReasonHomeMissing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveDataHome(tc.goos, envMap(tc.env))
			if tc.reason == "" {
				if err != nil || got != tc.want {
					t.Fatalf("ResolveDataHome = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ResolveDataHome = %q; want refusal %s", got, tc.reason)
			}
			if !protocol.IsReason(err, tc.reason) || protocol.CodeOf(err) != protocol.ExitUsage {
				t.Fatalf("err = %v (reason %s, code %d); want %s exit 2", err, protocol.AsError(err).Reason, protocol.CodeOf(err), tc.reason)
			}
			assertOneLine(t, err)
		})
	}
}

func TestPathsStoreLayout(t *testing.T) {
	t.Parallel()
	if got, want := AccDir("/d"), "/d/acc"; got != want {
		t.Errorf("AccDir = %q, want %q", got, want)
	}
	if got, want := StorePath("/d", "workspace_abc"), "/d/acc/workspaces/workspace_abc/acc.db"; got != want {
		t.Errorf("StorePath = %q, want %q", got, want)
	}
}

func TestCheckContainment(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	ws := filepath.Join(base, "ws")
	other := filepath.Join(base, "other")
	mustMkdir(t, filepath.Join(ws, "sub"))
	mustMkdir(t, other)
	// ws-ish sibling sharing a prefix with ws.
	mustMkdir(t, filepath.Join(base, "wsx"))
	// A symlink outside the workspace that points into it, and one inside
	// the workspace that points out of it.
	mustSymlink(t, filepath.Join(ws, "sub"), filepath.Join(base, "into-ws"))
	mustSymlink(t, other, filepath.Join(ws, "out"))
	mustSymlink(t, ws, filepath.Join(base, "alias"))

	tests := []struct {
		name     string
		dataHome string
		roots    []string
		refused  bool
	}{
		{"outside", other, []string{ws}, false},
		{"prefix sibling is not inside", filepath.Join(base, "wsx"), []string{ws}, false},
		{"equal to root", filepath.Dir(ws), []string{filepath.Join(base, "ws", "..")}, true},
		{"acc dir equals root", base, []string{filepath.Join(base, "acc")}, true},
		{"inside root", filepath.Join(ws, "sub"), []string{ws}, true},
		{"inside root, not existing yet", filepath.Join(ws, "new", "deeper"), []string{ws}, true},
		{"second root", other, []string{ws, other}, true},
		{"through symlink into root", filepath.Join(base, "into-ws", "data"), []string{ws}, true},
		{"through symlink out of root", filepath.Join(ws, "out", "data"), []string{ws}, false},
		{"dotdot climbs out", filepath.Join(ws, "sub", "..", "..", "other"), []string{ws}, false},
		{"dotdot after missing dir stays in", filepath.Join(ws, "missing", "..", "sub"), []string{ws}, true},
		{"filesystem root contains everything", other, []string{"/"}, true},
		{"parent of root is fine", base, []string{ws}, false},
		{"root named through a symlink", filepath.Join(ws, "d"), []string{filepath.Join(base, "alias")}, true},
		{"no roots", other, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckContainment(tc.dataHome, tc.roots)
			if !tc.refused {
				if err != nil {
					t.Fatalf("CheckContainment(%q, %q) = %v; want nil", tc.dataHome, tc.roots, err)
				}
				return
			}
			if !protocol.IsReason(err, protocol.ReasonRuntimeInsideWorkspace) || protocol.CodeOf(err) != protocol.ExitUsage {
				t.Fatalf("CheckContainment(%q, %q) = %v; want runtime_inside_workspace exit 2", tc.dataHome, tc.roots, err)
			}
			assertOneLine(t, err)
		})
	}
}

// DataHomeProblem names the first existing path on the way to acc's
// directory that is no usable directory, and says what it is.
func TestDataHomeProblem(t *testing.T) {
	base := realTempDir(t)
	mustMkdir(t, filepath.Join(base, "ok", "acc"))
	mustMkdir(t, filepath.Join(base, "fresh"))
	if err := os.WriteFile(filepath.Join(base, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"broken", filepath.Join(base, "nowhere")}, {"tofile", filepath.Join(base, "file")}, {"todir", filepath.Join(base, "ok")}} {
		if err := os.Symlink(l[1], filepath.Join(base, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ home, path, is string }{
		{filepath.Join(base, "ok"), "", ""},
		{filepath.Join(base, "fresh"), "", ""},
		{filepath.Join(base, "missing", "deeper"), "", ""},
		{filepath.Join(base, "todir"), "", ""},
		{filepath.Join(base, "broken"), filepath.Join(base, "broken"), "a broken symlink to " + filepath.Join(base, "nowhere")},
		{filepath.Join(base, "broken", "sub"), filepath.Join(base, "broken"), "a broken symlink to " + filepath.Join(base, "nowhere")},
		{filepath.Join(base, "file"), filepath.Join(base, "file"), "a file, not a directory"},
		{filepath.Join(base, "file", "sub"), filepath.Join(base, "file"), "a file, not a directory"},
		{filepath.Join(base, "tofile"), filepath.Join(base, "tofile"), "a symlink to a file, not a directory"},
	} {
		pp := DataHomeProblem(c.home)
		switch {
		case c.path == "" && pp != nil:
			t.Errorf("%s: problem %s, want none", c.home, pp)
		case c.path != "" && (pp == nil || pp.Path != c.path || pp.Is != c.is):
			t.Errorf("%s: problem %+v, want %s is %s", c.home, pp, c.path, c.is)
		}
		err := DataHomeError(c.home)
		if (err == nil) != (c.path == "") || (err != nil && !protocol.IsReason(err, protocol.ReasonDataHomeUnusable)) {
			t.Errorf("%s: error %v", c.home, err)
		}
	}
}
