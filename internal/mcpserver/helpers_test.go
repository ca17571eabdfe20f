package mcpserver

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acc-go/acc/pkg/protocol"
	"github.com/acc-go/acc/pkg/storage"
	"github.com/acc-go/acc/pkg/storage/pgtest"
)

var binDir string // acc and acc-mcp, built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "accmcp-bin")
	if err != nil {
		panic(err)
	}
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/acc-go/acc/cmd/acc", "github.com/acc-go/acc/cmd/acc-mcp")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// room is one test workspace with its own data home.
type room struct {
	t        testing.TB
	ws, data string
	home     string
	extraEnv map[string]string
	// pgID is the workspace id of a room on PostgreSQL (newRoomPG), "" on
	// SQLite.
	pgID string
}

func newRoom(t testing.TB) *room {
	t.Helper()
	base := t.TempDir()
	r := &room{t: t, ws: filepath.Join(base, "ws"), data: filepath.Join(base, "data"), home: filepath.Join(base, "home")}
	for _, d := range []string{r.ws, r.data, r.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// newRoomPG is a room on the PostgreSQL test server (ACC_TEST_PG_URL, from
// scripts/with-pg.sh): its workspace holds an acc.workspace.json with a
// fresh id, every process gets ACC_STORE_URL, and the room is dropped when
// the test ends. Without a server the test skips, or fails under
// ACC_REQUIRE_PG=1.
func newRoomPG(t testing.TB) *room {
	t.Helper()
	url := pgtest.URL(t)
	r := newRoom(t)
	id := "workspace_" + protocol.NewID(protocol.KindEvent)[len("event_"):]
	if err := os.WriteFile(filepath.Join(r.ws, "acc.workspace.json"), []byte(fmt.Sprintf(`{"schemaVersion": 1, "workspaceId": %q}`, id)), 0o644); err != nil {
		t.Fatal(err)
	}
	r.extraEnv = map[string]string{"ACC_STORE_URL": url, "PGPASSFILE": os.Getenv("PGPASSFILE")}
	r.pgID = id
	t.Cleanup(func() {
		if st, err := storage.OpenPostgres(context.Background(), url, id, storage.PostgresOptions{NoCreate: true}); err == nil {
			st.Drop(context.Background())
			st.Close()
		}
	})
	return r
}

func (r *room) env() map[string]string {
	env := map[string]string{"ACC_DATA_HOME": r.data, "HOME": r.home, "PATH": os.Getenv("PATH")}
	for k, v := range r.extraEnv {
		env[k] = v
	}
	return env
}

func (r *room) getenv(k string) string { return r.env()[k] }

// base is the directory holding the room's workspace, data and home.
func (r *room) base() string { return filepath.Dir(r.ws) }

func (r *room) environ(extra ...string) []string {
	var out []string
	for k, v := range r.env() {
		out = append(out, k+"="+v)
	}
	return append(out, extra...)
}

// acc runs the CLI in the workspace and returns the envelope's data.
func (r *room) acc(args ...string) map[string]any {
	r.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "acc"), append(args, "--json")...)
	cmd.Dir = r.ws
	cmd.Env = r.environ()
	out, err := cmd.Output()
	var env struct {
		OK   bool           `json:"ok"`
		Data map[string]any `json:"data"`
	}
	if jerr := json.Unmarshal(out, &env); jerr != nil || !env.OK {
		r.t.Fatalf("acc %v: %v %s", args, err, out)
	}
	return env.Data
}

// fingerprint hashes every file of the data home.
func (r *room) fingerprint() string {
	r.t.Helper()
	h := sha256.New()
	var names []string
	filepath.WalkDir(r.data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := os.ReadFile(n)
		if strings.HasSuffix(n, "-shm") {
			// SQLite's WAL index: shared memory that every reader writes
			// its read mark into; it holds no store content.
			fmt.Fprintf(h, "%s %d\n", n, len(b))
			continue
		}
		fmt.Fprintf(h, "%s %x\n", n, sha256.Sum256(b))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// client speaks newline-delimited JSON-RPC and matches replies by id.
type client struct {
	t       testing.TB
	w       io.WriteCloser
	mu      sync.Mutex
	cond    *sync.Cond
	replies map[string]json.RawMessage
	nulls   int      // replies with id null received so far
	notes   [][]byte // notifications received, in order
	eof     bool
	nextID  int
}

func newClient(t testing.TB, w io.WriteCloser, r io.Reader) *client {
	c := &client{t: t, w: w, replies: map[string]json.RawMessage{}}
	c.cond = sync.NewCond(&c.mu)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			line := append([]byte(nil), sc.Bytes()...)
			if json.Unmarshal(line, &m) != nil {
				continue
			}
			c.mu.Lock()
			if m.Method != "" && len(m.ID) == 0 { // a notification from the server
				c.notes = append(c.notes, line)
				c.cond.Broadcast()
				c.mu.Unlock()
				continue
			}
			// Replies with id null keep their order: the first is
			// "null", the second "null#1", the third "null#2", and so on.
			key := string(m.ID)
			if key == "null" || key == "" {
				key = "null"
				if c.nulls > 0 {
					key = fmt.Sprintf("null#%d", c.nulls)
				}
				c.nulls++
			}
			c.replies[key] = line
			c.cond.Broadcast()
			c.mu.Unlock()
		}
		c.mu.Lock()
		c.eof = true
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	return c
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// wait returns the reply whose id is key (raw JSON of the id).
func (c *client) wait(key string) map[string]any {
	c.t.Helper()
	b := c.waitRaw(key)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatal(err)
	}
	return m
}

// waitRaw returns the bytes of the reply whose id is key.
func (c *client) waitRaw(key string) []byte {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	go func() { time.Sleep(20 * time.Second); c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() }()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if b, ok := c.replies[key]; ok {
			delete(c.replies, key)
			return b
		}
		if c.eof || time.Now().After(deadline) {
			c.t.Fatalf("no reply with id %s", key)
		}
		c.cond.Wait()
	}
}

// request sends a request with a fresh numeric id and returns its reply.
func (c *client) request(method string, params any) map[string]any {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	c.send(string(b))
	return c.wait(fmt.Sprint(id))
}

func (c *client) initialize(version string) map[string]any {
	c.t.Helper()
	res := c.request("initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "self_reported_not_the_participant", "version": "1"}})
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// tool calls a tool and returns (structured or parsed text value, isError, text).
func (c *client) tool(name string, args any) (any, bool, string) {
	c.t.Helper()
	res := c.request("tools/call", map[string]any{"name": name, "arguments": args})
	r, ok := res["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s: no result: %v", name, res)
	}
	text := r["content"].([]any)[0].(map[string]any)["text"].(string)
	isErr, _ := r["isError"].(bool)
	var v any
	if !isErr {
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			c.t.Fatalf("%s: text is not JSON: %v", name, err)
		}
		if sc, ok := r["structuredContent"]; ok {
			a, _ := json.Marshal(sc)
			b, _ := json.Marshal(v)
			if string(a) != string(b) {
				c.t.Fatalf("%s: structured and text content differ:\n%s\n%s", name, a, b)
			}
		}
	}
	return v, isErr, text
}

// ok calls a tool that must succeed and returns its value as an object.
func (c *client) ok(name string, args any) map[string]any {
	c.t.Helper()
	v, isErr, text := c.tool(name, args)
	if isErr {
		c.t.Fatalf("%s %v: %s", name, args, text)
	}
	m, _ := v.(map[string]any)
	return m
}

// startInProcess serves one connection in this process over pipes.
func startInProcess(t *testing.T, r *room, participant string) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	cfg := &Config{Participant: participant, Dir: r.ws, Getenv: r.getenv}
	go func() { done <- Serve(context.Background(), cfg, inR, outW, io.Discard); outW.Close() }()
	c := newClient(t, inW, outR)
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return at the end of input")
		}
	})
	return c
}

// startBinary runs the built acc-mcp over real stdio; the cleanup closes
// its input and expects a clean exit.
func startBinary(t testing.TB, r *room, participant string) *client {
	t.Helper()
	c, p := spawnBinary(t, r, participant)
	t.Cleanup(func() {
		p.in.Close()
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("acc-mcp exit: %v; stderr: %s", err, p.stderr.String())
		}
	})
	return c
}

// proc is a running acc-mcp.
type proc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	stderr *strings.Builder
}

// spawnBinary starts the built acc-mcp; the caller ends it.
func spawnBinary(t testing.TB, r *room, participant string) (*client, *proc) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "acc-mcp"))
	cmd.Dir = t.TempDir() // not the workspace: ACC_MCP_WORKSPACE selects it
	cmd.Env = r.environ("ACC_MCP_PARTICIPANT="+participant, "ACC_MCP_WORKSPACE="+r.ws)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return newClient(t, in, out), &proc{cmd: cmd, in: in, stderr: &stderr}
}

// notifications returns the notifications received so far.
func (c *client) notifications() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.notes...)
}
