// acc's extension for Pi, written by `acc install` (docs/adapters.md#pi).
//
// Pi has no command hooks, so this file stands in for them: for six of Pi's
// events it runs acc's hook program, `sh <shim> pi <event>`, with one JSON
// object on its standard input (Claude Code's key names: hook_event_name,
// session_id, cwd, and source, prompt, tool_name, tool_input or reason as
// the event has them), and reads at most one JSON object back:
//   {"context": "..."}  text for the model (before a turn, after a tool),
//   {"deny": "..."}     refuse this tool call; the model reads the reason,
//   nothing             go on as usual.
// Whatever goes wrong (no shim, a non-zero exit, a timeout after 15 s,
// output that is not such an object) lets Pi go on as if acc were absent:
// no handler here ever throws, since a throwing tool_call handler would
// block the call.
//
// acc uninstall removes this file while it is exactly as acc wrote it.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

// The absolute path of acc's hook shim, a JSON string written by acc install.
const SHIM: string = "__ACC_SHIM__";

type Answer = { context?: unknown; deny?: unknown };

// hook runs the shim for event with the payload's common keys and fields,
// synchronously (Pi waits for the answer), and returns the answer object,
// or null when there is none.
function hook(event: string, ctx: ExtensionContext, fields: Record<string, unknown>): Answer | null {
  try {
    if (!existsSync(SHIM)) return null; // acc's data home is gone: do nothing
    const payload = { hook_event_name: event, session_id: ctx.sessionManager.getSessionId(), cwd: ctx.cwd, ...fields };
    const run = spawnSync("sh", [SHIM, "pi", event], {
      input: JSON.stringify(payload),
      encoding: "utf8",
      env: { ...process.env },
      timeout: 15000,
    });
    if (run.error || run.status !== 0) return null;
    const out = (run.stdout ?? "").trim();
    if (out === "") return null;
    const answer: unknown = JSON.parse(out);
    return answer !== null && typeof answer === "object" && !Array.isArray(answer) ? (answer as Answer) : null;
  } catch {
    return null;
  }
}

// text is the string the answer holds under key, else "".
function text(answer: Answer | null, key: keyof Answer): string {
  const v = answer?.[key];
  return typeof v === "string" ? v : "";
}

export default function (pi: ExtensionAPI) {
  pi.on("session_start", async (event, ctx) => {
    hook("session_start", ctx, { source: event.reason });
  });

  // Context before a turn becomes a message of its own after the prompt.
  pi.on("before_agent_start", async (event, ctx) => {
    const context = text(hook("before_agent_start", ctx, { prompt: event.prompt }), "context");
    if (context !== "") return { message: { customType: "acc", content: context, display: false } };
  });

  // A denial blocks the call; the model's tool result is the reason.
  pi.on("tool_call", async (event, ctx) => {
    const reason = text(hook("tool_call", ctx, { tool_name: event.toolName, tool_input: event.input }), "deny");
    if (reason !== "") return { block: true, reason };
  });

  // Context after a tool is added to that tool's result, which the model
  // reads in its next request of the same turn.
  pi.on("tool_result", async (event, ctx) => {
    const context = text(hook("tool_result", ctx, { tool_name: event.toolName, tool_input: event.input }), "context");
    if (context !== "") return { content: [...event.content, { type: "text" as const, text: context }] };
  });

  pi.on("agent_end", async (_event, ctx) => {
    hook("agent_end", ctx, {});
  });

  pi.on("session_shutdown", async (event, ctx) => {
    hook("session_shutdown", ctx, { reason: event.reason });
  });
}
