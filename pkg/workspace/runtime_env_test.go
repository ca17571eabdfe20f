package workspace

import (
	"path/filepath"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
)

func TestResolveRuntimeEnvDefaultsAndOverrides(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		goos                   string
		env                    map[string]string
		config, cache, partcpt string
	}{
		{"linux defaults", "linux", map[string]string{"HOME": "/h"}, "/h/.config", "/h/.cache", ""},
		{"linux xdg", "linux", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x/c", "XDG_CACHE_HOME": "/x/k"}, "/x/c", "/x/k", ""},
		{"relative xdg falls back", "linux", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "c"}, "/h/.config", "/h/.cache", ""},
		{"darwin ignores xdg", "darwin", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x/c"}, "/h/Library/Application Support", "/h/Library/Caches", ""},
		{"acc overrides", "linux", map[string]string{"HOME": "/h", "ACC_CONFIG_HOME": "/o/c/", "ACC_CACHE_HOME": "/o/k"}, "/o/c", "/o/k", ""},
		{"no home with a data home", "linux", map[string]string{"ACC_DATA_HOME": "/d"}, "", "", ""},
		{"participant sanitised", "linux", map[string]string{"HOME": "/h", "ACC_PARTICIPANT": "  code review!  "}, "/h/.config", "/h/.cache", "code-review-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ResolveRuntimeEnv(tc.goos, envMap(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if e.ConfigHome != tc.config || e.CacheHome != tc.cache || e.Participant != tc.partcpt {
				t.Fatalf("got config %q cache %q participant %q; want %q %q %q", e.ConfigHome, e.CacheHome, e.Participant, tc.config, tc.cache, tc.partcpt)
			}
		})
	}
}

func TestResolveRuntimeEnvRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		reason   string
		variable string
	}{
		{"relative data home", map[string]string{"HOME": "/h", "ACC_DATA_HOME": "d"}, protocol.ReasonPathNotAbsolute, "ACC_DATA_HOME"},
		{"relative config home", map[string]string{"HOME": "/h", "ACC_CONFIG_HOME": "c"}, protocol.ReasonPathNotAbsolute, "ACC_CONFIG_HOME"},
		{"relative cache home", map[string]string{"HOME": "/h", "ACC_CACHE_HOME": "./k"}, protocol.ReasonPathNotAbsolute, "ACC_CACHE_HOME"},
		{"relative workspace root", map[string]string{"HOME": "/h", "ACC_WORKSPACE_ROOT": "repo"}, protocol.ReasonPathNotAbsolute, "ACC_WORKSPACE_ROOT"},
		{"unusable participant", map[string]string{"HOME": "/h", "ACC_PARTICIPANT": "!!! ..."}, protocol.ReasonEnvInvalid, "ACC_PARTICIPANT"},
		{"no home", map[string]string{}, protocol.ReasonHomeMissing, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveRuntimeEnv("linux", envMap(tc.env))
			wantReason(t, err, tc.reason, protocol.ExitUsage)
			assertOneLine(t, err)
			if tc.variable != "" && protocol.AsError(err).Details["variable"] != tc.variable {
				t.Fatalf("details.variable = %v, want %s (%s)", protocol.AsError(err).Details["variable"], tc.variable, err)
			}
		})
	}
}

func TestRuntimeEnvContainment(t *testing.T) {
	base := realTempDir(t)
	repo := filepath.Join(base, "repo")
	newRepo(t, repo)
	ws := discover(t, repo, nil)
	for _, tc := range []struct {
		name     string
		env      map[string]string
		variable string
	}{
		{"config home inside", map[string]string{"ACC_DATA_HOME": base + "/data", "ACC_CONFIG_HOME": repo + "/.cfg"}, "ACC_CONFIG_HOME"},
		{"cache home is the repo", map[string]string{"ACC_DATA_HOME": base + "/data", "ACC_CACHE_HOME": repo}, "ACC_CACHE_HOME"},
		{"cache home inside .git", map[string]string{"ACC_DATA_HOME": base + "/data", "ACC_CACHE_HOME": repo + "/.git/x"}, "ACC_CACHE_HOME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ResolveRuntimeEnv("linux", envMap(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			err = e.CheckContainment(ws)
			wantReason(t, err, protocol.ReasonRuntimeInsideWorkspace, protocol.ExitUsage)
			assertOneLine(t, err)
			if protocol.AsError(err).Details["variable"] != tc.variable {
				t.Fatalf("details.variable = %v, want %s", protocol.AsError(err).Details["variable"], tc.variable)
			}
		})
	}

	// A default config home inside the workspace is not refused: nothing is
	// written there yet (here HOME is the repository itself).
	e, err := ResolveRuntimeEnv("linux", envMap(map[string]string{"HOME": repo, "ACC_DATA_HOME": base + "/data"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CheckContainment(ws); err != nil {
		t.Fatalf("default config home refused: %v", err)
	}
}
