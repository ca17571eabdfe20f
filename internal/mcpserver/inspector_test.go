package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acc-go/acc/internal/realclient"
)

// The MCP Inspector, pinned exactly, run in its CLI mode against the built
// acc-mcp. It needs Node 22, which comes from npm too, as the platform
// package of the node binary. scripts/install-clients.sh installs the same
// versions into the same cache (TestInspectorPinAgrees).
const (
	nodeName         = "node"
	nodeVersion      = "22.23.5"
	inspectorName    = "inspector"
	inspectorPackage = "@modelcontextprotocol/inspector"
	inspectorVersion = "2.12.0"
)

// nodePackage is the npm platform package holding the node binary.
func nodePackage() (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" || arch == "" {
		return "", fmt.Errorf("no node platform package for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return "node-" + runtime.GOOS + "-" + arch, nil
}

// nodeBin is the directory of the node binary inside a node install.
func nodeBin(dir, pkg string) string { return filepath.Join(dir, "node_modules", pkg, "bin") }

// requireInspector installs Node 22 and the Inspector (skipping loudly, or
// failing under ACC_REQUIRE_CLIENTS=1, when they cannot be had) and returns
// the mcp-inspector program and a PATH with Node 22 first.
func requireInspector(t *testing.T) (inspector, path string) {
	t.Helper()
	unavailable := func(format string, a ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, a...)
		if os.Getenv("ACC_REQUIRE_CLIENTS") == "1" {
			t.Fatalf("%s (ACC_REQUIRE_CLIENTS=1)", msg)
		}
		t.Skipf("SKIPPED, NOT RUN: %s; set ACC_REQUIRE_CLIENTS=1 to make this a failure", msg)
	}
	pkg, err := nodePackage()
	if err != nil {
		unavailable("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	nodeDir, err := realclient.NpmInstall(ctx, nodeName, nodeVersion, []string{"--ignore-scripts", pkg + "@" + nodeVersion}, os.Environ(),
		func(dir string, _ bool) error {
			c := exec.CommandContext(ctx, filepath.Join(nodeBin(dir, pkg), "node"), "--version")
			out, err := c.Output()
			if got := strings.TrimSpace(string(out)); err != nil || got != "v"+nodeVersion {
				return fmt.Errorf("node --version: %q %v, want v%s", got, err, nodeVersion)
			}
			return nil
		})
	if err != nil {
		unavailable("cannot install %s@%s: %v", pkg, nodeVersion, err)
	}
	path = nodeBin(nodeDir, pkg) + string(os.PathListSeparator) + os.Getenv("PATH")
	env := append(os.Environ(), "PATH="+path)
	dir, err := realclient.NpmInstall(ctx, inspectorName, inspectorVersion, []string{inspectorPackage + "@" + inspectorVersion}, env,
		func(dir string, _ bool) error {
			if err := realclient.PackageVersion(dir, inspectorPackage, inspectorVersion); err != nil {
				return err
			}
			_, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "mcp-inspector"))
			return err
		})
	if err != nil {
		unavailable("cannot install %s@%s: %v", inspectorPackage, inspectorVersion, err)
	}
	t.Logf("node %s and %s@%s ready in %v: %s", nodeVersion, inspectorPackage, inspectorVersion, time.Since(start).Round(time.Millisecond), dir)
	return filepath.Join(dir, "node_modules", ".bin", "mcp-inspector"), path
}

func TestInspectorPinAgrees(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "install-clients.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf(`(?m)^NODE="%s:%s"$`, nodeName, regexp.QuoteMeta(nodeVersion)),
		fmt.Sprintf(`(?m)^INSPECTOR="%s:%s:%s"$`, inspectorName, regexp.QuoteMeta(inspectorPackage), regexp.QuoteMeta(inspectorVersion)),
	} {
		if !regexp.MustCompile(want).Match(b) {
			t.Errorf("scripts/install-clients.sh does not match %s", want)
		}
	}
}

// TestInspectorCLI: the MCP Inspector's CLI mode lists acc-mcp's tools and
// reads the three resources.
func TestInspectorCLI(t *testing.T) {
	inspector, path := requireInspector(t)
	r := newRoom(t)
	git := exec.Command("git", "init", "-q", r.ws)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	run := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		full := append([]string{"--cli",
			"-e", "ACC_DATA_HOME=" + r.data,
			"-e", "ACC_MCP_WORKSPACE=" + r.ws,
			"-e", "ACC_MCP_PARTICIPANT=research",
			"-e", "HOME=" + r.home,
			filepath.Join(binDir, "acc-mcp")}, args...)
		cmd := exec.CommandContext(ctx, inspector, full...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(r.environ(), "PATH="+path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var v map[string]any
		if jerr := json.Unmarshal(out, &v); err != nil || jerr != nil {
			t.Fatalf("mcp-inspector %s: %v %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, jerr, out, stderr.String())
		}
		return v
	}
	list := run("--method", "tools/list")
	var names []string
	tools, _ := list["tools"].([]any)
	for _, tool := range tools {
		if m, ok := tool.(map[string]any); ok {
			names = append(names, fmt.Sprint(m["name"]))
		}
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != "acc_ack,acc_claim,acc_finish,acc_inbox,acc_message,acc_release,acc_reply,acc_request,acc_search,acc_status,acc_sync,acc_work" {
		t.Errorf("tools/list: %s", got)
	}
	for _, uri := range []string{"acc://snapshot", "acc://roster", "acc://inbox"} {
		res := run("--method", "resources/read", "--uri", uri)
		contents, _ := res["contents"].([]any)
		if len(contents) == 0 {
			t.Errorf("%s: no contents: %v", uri, res)
			continue
		}
		c, _ := contents[0].(map[string]any)
		text, _ := c["text"].(string)
		if c["uri"] != uri || !json.Valid([]byte(text)) || len(text) == 0 {
			t.Errorf("%s: %v", uri, c)
		}
		if isErr, _ := res["isError"].(bool); isErr {
			t.Errorf("%s: isError: %v", uri, res)
		}
		t.Logf("%s: %.200s", uri, text)
	}
}
