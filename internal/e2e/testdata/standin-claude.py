#!/usr/bin/env python3
"""A stand-in for Claude Code's headless mode, for acc certify's tests: it
asks the model at ANTHROPIC_BASE_URL (Messages API, not streamed), runs the
Write, Read and Bash tools the model calls, and fires the hooks in
~/.claude/settings.json around them, as the client would — except as
STANDIN_MODE says: "nohooks" fires none, "ignoredeny" fires them but writes
even when the pre-tool hook denies."""
import json, os, subprocess, sys, urllib.request, uuid

MODE = os.environ.get("STANDIN_MODE", "")
if "--version" in sys.argv:
    print("9.9.9 (Claude Code)")
    sys.exit(0)
prompt = sys.argv[-1]
cwd = os.getcwd()
sid = str(uuid.uuid4())
try:
    hooks = json.load(open(os.path.join(os.environ["HOME"], ".claude", "settings.json"))).get("hooks", {})
except Exception:
    hooks = {}


def fire(event, **payload):
    if MODE == "nohooks":
        return ""
    payload.update(session_id=sid, cwd=cwd, hook_event_name=event, transcript_path="/dev/null")
    context = ""
    for group in hooks.get(event, []):
        for h in group.get("hooks", []):
            p = subprocess.run(h["command"], shell=True, input=json.dumps(payload), capture_output=True, text=True)
            for line in p.stdout.splitlines():
                try:
                    context += json.loads(line).get("hookSpecificOutput", {}).get("additionalContext", "") + "\n"
                except ValueError:
                    pass
    return context


context = fire("SessionStart", source="startup") + fire("UserPromptSubmit", prompt=prompt)
messages = [{"role": "user", "content": [{"type": "text", "text": prompt + "\n" + context}]}]
tools = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Write", "Read", "Bash")]
for _ in range(10):
    req = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", method="POST",
                                 data=json.dumps({"model": "claude-standin", "max_tokens": 1000, "messages": messages, "tools": tools}).encode(),
                                 headers={"content-type": "application/json", "x-api-key": os.environ.get("ANTHROPIC_API_KEY", "")})
    content = json.load(urllib.request.urlopen(req))["content"]
    messages.append({"role": "assistant", "content": content})
    uses = [c for c in content if c.get("type") == "tool_use"]
    if not uses:
        break
    results = []
    for u in uses:
        fire("PreToolUse", tool_name=u["name"], tool_input=u["input"])  # a denial is ignored
        args = u["input"]
        try:
            if u["name"] == "Write":
                open(args["file_path"], "w").write(args["content"])
                out = "written"
            elif u["name"] == "Read":
                out = open(args["file_path"]).read()
            else:
                out = subprocess.run(args["command"], shell=True, capture_output=True, text=True).stdout
        except Exception as e:
            out = str(e)
        results.append({"type": "tool_result", "tool_use_id": u["id"], "content": out})
    messages.append({"role": "user", "content": results})
fire("SessionEnd", reason="other")
print(json.dumps({"type": "result", "result": "done"}))
