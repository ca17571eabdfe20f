package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The e2e test binary doubles as a stand-in ACP agent for the relay tests
// (fakeACPAgent): with ACC_E2E_FAKE_ACP set, TestMain runs it instead of
// the tests. Its behaviour follows the words in each prompt's text:
//
//	BIG       a 4 MiB agent_message_chunk notification
//	PERMIT    a session/request_permission request (id 0, or a string id
//	          with FAKE_ACP_STRING_IDS=1), and the prompt is answered only
//	          once the editor answered it
//	WRITE:p   an fs/write_text_file request for path p, awaited likewise
//	GARBAGE   a line that is not JSON
//	CRASH     exit 3 at once, mid-turn
//	FLOOD     with WRITE or PERMIT, 3000 notifications (about 600 KB)
//	          right after the request, before reading again
//
// Every prompt also gets an extension notification (_fake/ext) before its
// answer and a session/update after it. FAKE_ACP_DIR receives in.bin and
// out.bin, every byte the agent read and wrote; pid holds its pid; signal
// the name of a signal it got. FAKE_ACP_ON_EOF is "exit" (default),
// "stay" (keep running until a signal) or "stay-hard" (ignore SIGTERM too).
// FAKE_ACP_EXIT is its exit code at end of input; FAKE_ACP_SID fixes the
// id session/new answers; FAKE_ACP_NOREAD=1 never reads its input;
// FAKE_ACP_WRITE_AFTER_EOF=p asks the editor to write p once its input
// ended; FAKE_ACP_NO_CLOSE=1 never answers session/close;
// FAKE_ACP_WRITE_SID names another session in its write requests.
const fakeACPEnv = "ACC_E2E_FAKE_ACP"

func fakeACPAgent() int {
	dir := os.Getenv("FAKE_ACP_DIR")
	inLog, _ := os.Create(filepath.Join(dir, "in.bin"))
	outLog, _ := os.Create(filepath.Join(dir, "out.bin"))
	_ = os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	out := io.MultiWriter(os.Stdout, outLog)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
	}
	onEOF := os.Getenv("FAKE_ACP_ON_EOF")
	sigs := make(chan os.Signal, 1)
	if onEOF == "stay-hard" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		go func() {
			s := <-sigs
			_ = os.WriteFile(filepath.Join(dir, "signal"), []byte(s.String()), 0o644)
			os.Exit(128 + int(s.(syscall.Signal)))
		}()
	}
	if os.Getenv("FAKE_ACP_NOREAD") == "1" {
		for { // never reads its input
			time.Sleep(time.Hour)
		}
	}
	sessions, nextID := 0, 0
	// waiting: a prompt whose answer waits for the editor's answer to one
	// of the agent's requests, by the request's id.
	waiting := map[string]json.RawMessage{}
	agentID := func() any {
		nextID++
		if os.Getenv("FAKE_ACP_STRING_IDS") == "1" {
			return fmt.Sprintf("agent-req-%d", nextID)
		}
		return nextID - 1 // 0 first: the editor's ids start at 0 too
	}
	finish := func(sid string, id json.RawMessage) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"stopReason": "end_turn", "_meta": map[string]any{"fake": true}}})
		send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid,
			"update": map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{}}}})
	}
	br := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		inLog.Write(line)
		if len(line) > 0 {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					SessionID string            `json:"sessionId"`
					Prompt    []json.RawMessage `json:"prompt"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &msg) == nil {
				switch msg.Method {
				case "initialize":
					send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"protocolVersion": 1,
						"agentInfo":         map[string]any{"name": "fake-agent", "version": "1.0.0"},
						"agentCapabilities": map[string]any{"loadSession": true, "promptCapabilities": map[string]any{"embeddedContext": true}},
						"authMethods":       []any{}}})
				case "session/new":
					sessions++
					sid := fmt.Sprintf("fake-session-%d", sessions)
					if fixed := os.Getenv("FAKE_ACP_SID"); fixed != "" {
						sid = fixed
					}
					send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"sessionId": sid,
						"modes": map[string]any{"currentModeId": "default"}}})
				case "session/close":
					if os.Getenv("FAKE_ACP_NO_CLOSE") != "1" { // else never answered
						send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{}})
					}
				case "session/load", "session/resume", "session/set_mode":
					send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{}})
				case "session/prompt":
					var text strings.Builder
					for _, b := range msg.Params.Prompt {
						var blk struct {
							Text string `json:"text"`
						}
						_ = json.Unmarshal(b, &blk)
						text.WriteString(blk.Text + " ")
					}
					t, sid := text.String(), msg.Params.SessionID
					if strings.Contains(t, "CRASH") {
						os.Exit(3)
					}
					send(map[string]any{"jsonrpc": "2.0", "method": "_fake/ext", "params": map[string]any{"k": "v"}})
					send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid,
						"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "working"}}}})
					if strings.Contains(t, "BIG") {
						send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid,
							"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": strings.Repeat("é", 2<<20)}}}})
					}
					if strings.Contains(t, "GARBAGE") {
						out.Write([]byte("this line is not JSON {\n"))
					}
					var req map[string]any
					switch {
					case strings.Contains(t, "PERMIT"):
						req = map[string]any{"jsonrpc": "2.0", "id": agentID(), "method": "session/request_permission", "params": map[string]any{"sessionId": sid,
							"toolCall": map[string]any{"toolCallId": "call-1", "title": "echo hi", "kind": "execute"},
							"options":  []any{map[string]any{"optionId": "yes", "name": "Allow", "kind": "allow_once"}, map[string]any{"optionId": "no", "name": "Reject", "kind": "reject_once"}}}}
					case strings.Contains(t, "WRITE:"):
						path := strings.Fields(strings.SplitN(t, "WRITE:", 2)[1])[0]
						wsid := sid
						if other := os.Getenv("FAKE_ACP_WRITE_SID"); other != "" {
							wsid = other
						}
						req = map[string]any{"jsonrpc": "2.0", "id": agentID(), "method": "fs/write_text_file", "params": map[string]any{"sessionId": wsid, "path": path, "content": "written by the agent\n"}}
					}
					if req != nil {
						b, _ := json.Marshal(req["id"])
						waiting[string(b)] = msg.ID
						if strings.Contains(t, "FLOOD") {
							// Let the editor's next line start arriving first.
							time.Sleep(300 * time.Millisecond)
						}
						send(req)
						if strings.Contains(t, "FLOOD") {
							// ~600 KB before reading again: the relay must
							// take it while its answer to req waits.
							for i := range 3000 {
								send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid,
									"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": fmt.Sprintf("%04d %s", i, strings.Repeat("f", 160))}}}})
							}
						}
						break
					}
					finish(sid, msg.ID)
				default:
					if msg.Method == "" && len(msg.ID) > 0 {
						if promptID, ok := waiting[string(msg.ID)]; ok {
							delete(waiting, string(msg.ID))
							finish("", promptID)
						}
					} else if len(msg.ID) > 0 {
						send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "not supported"}})
					}
				}
			}
		}
		if err != nil {
			break
		}
	}
	if path := os.Getenv("FAKE_ACP_WRITE_AFTER_EOF"); path != "" {
		send(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "fs/write_text_file", "params": map[string]any{"sessionId": "fake-session-1", "path": path, "content": "CLOBBERED\n"}})
		time.Sleep(time.Second)
	}
	switch onEOF {
	case "stay", "stay-hard":
		for {
			time.Sleep(time.Hour)
		}
	}
	code, _ := strconv.Atoi(os.Getenv("FAKE_ACP_EXIT"))
	return code
}
