package realclient

import (
	"os"
	"path/filepath"
)

// droidModel is the fake model as Droid's one custom model, in the
// displayName-and-index form its protocol names it by (Fake, the first
// customModels entry).
const droidModel = "custom:Fake-0"

// droidSettings is Droid's settings.json without hooks: the fake model as
// its one custom model, over Chat Completions
// (docs/real-clients.md#factory-droid).
func droidSettings(modelURL string) map[string]any {
	return map[string]any{"customModels": []any{map[string]any{
		"model": "fake-model", "displayName": "Fake", "baseUrl": modelURL + "/v1", "apiKey": FakeAPIKey,
		"provider": "generic-chat-completion-api", "maxOutputTokens": 4096,
	}}}
}

// droidDriverFile is where Configure puts droidDriver in a HOME.
func droidDriverFile(home string) string { return filepath.Join(home, "acc-droid-driver.mjs") }

// writeDroidDriver writes droidDriver into home.
func writeDroidDriver(home string) error {
	return os.WriteFile(droidDriverFile(home), []byte(droidDriver), 0o644)
}

// droidDriver runs one turn of Droid headless over the JSON-RPC protocol
// its own interface drives (`droid exec --input-format stream-jsonrpc
// --output-format stream-jsonrpc`, docs/real-clients.md#factory-droid):
// it starts a session in its directory (or, with "resume", loads the
// newest one Droid stored for it, under the same id), adds the prompt as
// the user's message, waits for the end of the turn and closes the
// session, so every hook a person's turn fires fires: SessionStart,
// UserPromptSubmit, the tool hooks, Stop and SessionEnd. Plain `droid
// exec` fires no UserPromptSubmit and cannot resume offline. It prints
// the assistant's messages and exits with Droid's exit code.
//
//	node acc-droid-driver.mjs <droid> <new|resume> <model> <prompt>
const droidDriver = `import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

const [exe, mode, model, prompt] = process.argv.slice(2);
const cwd = process.cwd();
const droid = spawn(exe, ["exec", "--input-format", "stream-jsonrpc", "--output-format", "stream-jsonrpc"], { cwd, stdio: ["pipe", "pipe", "inherit"] });
const base = { factoryApiVersion: "1.0.0", factoryProtocolVersion: "1.220.0", type: "request", jsonrpc: "2.0" };
const pending = new Map();
let turnDone = null;
function req(method, params) {
  const id = randomUUID();
  droid.stdin.write(JSON.stringify({ ...base, id, method, params }) + "\n");
  return new Promise((resolve, reject) => pending.set(id, (j) => (j.error ? reject(new Error(method + ": " + JSON.stringify(j.error))) : resolve(j.result))));
}
readline.createInterface({ input: droid.stdout }).on("line", (line) => {
  let j;
  try { j = JSON.parse(line); } catch { return; }
  if (j.type === "response") {
    pending.get(j.id)?.(j);
    pending.delete(j.id);
  } else if (j.type === "notification") {
    const n = j.params?.notification ?? {};
    if (n.type === "create_message" && n.message?.role === "assistant") {
      for (const part of n.message.content ?? []) if (part.type === "text") console.log(part.text);
    }
    if (n.type === "error") console.error("droid:", JSON.stringify(n));
    if (n.type === "agent_turn_completed") turnDone?.();
  }
});
const exited = new Promise((resolve) => droid.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));

// newestSession is the id of the session Droid stored last for cwd, under
// ~/.factory/sessions/<cwd with each / a ->/<id>.jsonl.
function newestSession() {
  const dir = path.join(process.env.FACTORY_HOME_OVERRIDE || os.homedir(), ".factory", "sessions", cwd.replaceAll("/", "-"));
  const ids = fs.readdirSync(dir).filter((f) => /^[0-9a-f-]{36}\.jsonl$/.test(f))
    .map((f) => ({ f, t: fs.statSync(path.join(dir, f)).mtimeMs })).sort((a, b) => b.t - a.t);
  if (!ids.length) throw new Error("no session of " + cwd + " in " + dir);
  return ids[0].f.slice(0, -".jsonl".length);
}

try {
  if (mode === "resume") await req("droid.load_session", { sessionId: newestSession() });
  else await req("droid.initialize_session", { machineId: "local", cwd, interactionMode: "auto", autonomyLevel: "high", modelId: model });
  const done = new Promise((resolve) => (turnDone = resolve));
  await req("droid.add_user_message", { messageId: randomUUID(), text: prompt });
  await done;
  await req("droid.close_session", { reason: "other" });
} catch (err) {
  console.error(String(err));
  droid.kill();
  await exited;
  process.exit(1);
}
droid.stdin.end();
process.exit(await exited);
`
