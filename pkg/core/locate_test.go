package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/workspace"
)

func TestOpenValidatesTheEnvironmentAndWritesNothing(t *testing.T) {
	t.Parallel()
	base := realTempDir(t)
	repo := filepath.Join(base, "repo")
	newRepo(t, repo)
	data := filepath.Join(base, "data")
	for _, tc := range []struct {
		name   string
		env    map[string]string
		reason string
	}{
		{"config home inside", map[string]string{"ACC_CONFIG_HOME": repo + "/cfg"}, protocol.ReasonRuntimeInsideWorkspace},
		{"relative cache home", map[string]string{"ACC_CACHE_HOME": "cache"}, protocol.ReasonPathNotAbsolute},
		{"unusable participant", map[string]string{"ACC_PARTICIPANT": "***"}, protocol.ReasonEnvInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"HOME": base, "ACC_DATA_HOME": data}
			for k, v := range tc.env {
				env[k] = v
			}
			_, err := Open(context.Background(), OpenOptions{Cwd: repo, Getenv: envMap(env), GOOS: "linux"})
			wantReason(t, err, tc.reason, protocol.ExitUsage)
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Fatalf("a refused open created the data home: %v", err)
			}
			if _, err := os.Stat(filepath.Join(repo, "cfg")); !os.IsNotExist(err) {
				t.Fatalf("a refused open created the config home: %v", err)
			}
		})
	}

	r, err := Open(context.Background(), OpenOptions{Cwd: repo, GOOS: "linux", NoCreate: true,
		Getenv: envMap(map[string]string{"HOME": base, "ACC_DATA_HOME": data, "ACC_PARTICIPANT": "Rev iewer"})})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Env == nil || r.Env.Participant != "Rev-iewer" || r.Env.DataHome != data {
		t.Fatalf("room env = %+v", r.Env)
	}
	if r.WS.Policy.ClaimMode != workspace.ClaimModeAdvisory {
		t.Fatalf("default claim mode = %q", r.WS.Policy.ClaimMode)
	}
}
