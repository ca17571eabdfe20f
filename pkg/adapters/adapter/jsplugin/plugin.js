// acc's plugin for __DISPLAY__. `acc install` wrote this file and
// `acc uninstall` removes it; an edited copy is left alone.
// What it does and why: docs/adapters.md#opencode in acc's repository.
//
// For the hooks and events below it runs acc's hook program, payload on
// stdin, and waits for its answer: at most one JSON object on stdout,
//   {"context": "<text>"}  text for the model, added to the user's message
//                          or to the tool's result;
//   {"deny": "<reason>"}   the tool call does not run; the model reads the
//                          reason as its result.
// Any other answer, a failure or a timeout leaves __DISPLAY__ to go on as
// if acc were not installed. Only node: modules are used, so the plugin
// needs nothing from npm.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const CLIENT = __CLIENT__;
const SHIM = __SHIM__;
const TIMEOUT_MS = 15000;

function hook(event, fields) {
  if (!existsSync(SHIM)) return {};
  const run = spawnSync("sh", [SHIM, CLIENT, event], {
    input: JSON.stringify({ hook_event_name: event, ...fields }),
    encoding: "utf8",
    // The whole environment, as the client sees it now: a child spawned
    // without env gets the one the client started with, which lacks the
    // variable naming the client's pid (__PIDVAR__).
    env: { ...process.env },
    timeout: TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.error || typeof run.stdout !== "string") return {};
  const out = run.stdout.trim();
  if (out === "") return {};
  try {
    const answer = JSON.parse(out);
    return answer !== null && typeof answer === "object" ? answer : {};
  } catch {
    return {};
  }
}

function text(answer, key) {
  return typeof answer[key] === "string" && answer[key] !== "" ? answer[key] : "";
}

export const AccPlugin = async ({ directory }) => {
  const cwd = directory || process.cwd();
  // parents maps a subagent's session to the session that started it: a
  // subagent's calls are its root session's, as Claude Code's are.
  const parents = new Map();
  const root = (id) => {
    for (let i = 0; i < 64 && parents.has(id); i++) id = parents.get(id);
    return id;
  };
  // The root sessions this process worked in: each ends when it exits.
  // Event handlers are not awaited at exit, so everything here is
  // synchronous.
  const live = new Set();
  process.on("exit", () => {
    for (const id of live) hook("process.exit", { session_id: id, cwd, reason: "exit" });
  });

  return {
    event: async ({ event }) => {
      const props = (event && event.properties) || {};
      const info = props.info || {};
      const id = props.sessionID || info.id;
      if (typeof id !== "string" || id === "") return;
      switch (event.type) {
        case "session.created":
          if (info.parentID) {
            parents.set(id, info.parentID);
            return;
          }
          live.add(id);
          hook("session.created", { session_id: id, cwd: info.directory || cwd, source: "startup" });
          return;
        case "session.idle":
          if (!live.has(id)) return;
          hook("session.idle", { session_id: id, cwd });
          return;
        case "session.deleted":
          if (parents.has(id) || info.parentID) return;
          live.delete(id);
          hook("session.deleted", { session_id: id, cwd: info.directory || cwd, reason: "deleted" });
          return;
      }
    },

    "chat.message": async (input, output) => {
      // A subagent's prompt comes from its parent's model, not a person.
      if (parents.has(input.sessionID)) return;
      if (!live.has(input.sessionID)) {
        // A session this process did not create (run --continue): it
        // starts here, as a resumed one.
        live.add(input.sessionID);
        hook("session.resumed", { session_id: input.sessionID, cwd, source: "resume" });
      }
      const parts = Array.isArray(output.parts) ? output.parts : [];
      const prompt = parts.filter((p) => p && p.type === "text" && !p.synthetic).map((p) => p.text).join("\n");
      const context = text(hook("chat.message", { session_id: input.sessionID, cwd, prompt }), "context");
      if (context === "") return;
      const last = parts[parts.length - 1];
      // A part id must start with "prt"; the prompt's id plus a suffix
      // sorts right after it.
      parts.push({
        id: (last && typeof last.id === "string" ? last.id : "prt") + "acc",
        messageID: output.message.id,
        sessionID: output.message.sessionID,
        type: "text",
        text: context,
        synthetic: true,
      });
    },

    "tool.execute.before": async (input, output) => {
      const reason = text(hook("tool.execute.before", {
        session_id: root(input.sessionID), cwd, tool_name: input.tool, tool_input: output.args,
      }), "deny");
      if (reason !== "") throw new Error(reason);
    },

    "tool.execute.after": async (input, output) => {
      if (typeof output.output !== "string") return;
      const context = text(hook("tool.execute.after", {
        session_id: root(input.sessionID), cwd, tool_name: input.tool,
      }), "context");
      if (context !== "") output.output = output.output + "\n\n" + context;
    },
  };
};
