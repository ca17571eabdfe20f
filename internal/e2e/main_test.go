package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Paths of the binaries TestMain builds.
var (
	accBin  string
	hookBin string
	mcpBin  string
)

// TestMain builds acc, acc-hook and acc-mcp once from the repository root,
// runs the tests and removes the build.
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv(fakeACPEnv) != "" {
		return fakeACPAgent()
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot find the repository root: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "acc-e2e-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	build := exec.Command(goTool(), "build", "-o", dir+string(filepath.Separator), "./cmd/acc", "./cmd/acc-hook", "./cmd/acc-mcp")
	build.Dir = root
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/acc ./cmd/acc-hook ./cmd/acc-mcp in %s failed: %v\n%s", root, err, out.String())
		return 1
	}
	accBin = filepath.Join(dir, "acc")
	hookBin = filepath.Join(dir, "acc-hook")
	mcpBin = filepath.Join(dir, "acc-mcp")
	for _, b := range []string{accBin, hookBin, mcpBin} {
		if _, err := os.Stat(b); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: the build did not produce %s: %v\n", b, err)
			return 1
		}
	}
	return m.Run()
}

// goTool is the go command that runs these tests: `go test` puts its own
// GOROOT/bin first on the PATH of the test binary.
func goTool() string { return "go" }

// repoRoot finds the directory holding go.work: the main module's directory
// as `go env GOMOD` reports it, else the nearest ancestor of the working
// directory with a go.work file.
func repoRoot() (string, error) {
	var candidates []string
	if out, err := exec.Command(goTool(), "env", "GOMOD").Output(); err == nil {
		if mod := strings.TrimSpace(string(out)); mod != "" && mod != os.DevNull {
			candidates = append(candidates, filepath.Dir(mod))
		}
	}
	if wd, err := os.Getwd(); err == nil {
		candidates = append(candidates, wd)
	}
	for _, start := range candidates {
		for d := start; ; d = filepath.Dir(d) {
			if fileExists(filepath.Join(d, "go.work")) && fileExists(filepath.Join(d, "cmd", "acc")) {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("no ancestor of the working directory holds go.work and cmd/acc")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// processTimeout bounds one child process; generous, so that a loaded
// 2-core machine never trips it, yet a hung child cannot hang the suite.
const processTimeout = 2 * time.Minute

func withTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), processTimeout)
}
