// A client nobody on this project wrote: the official TypeScript MCP SDK,
// installed by the Go test (sdk_test.go) into a cache outside the clone,
// drives the built acc-mcp over stdio and prints one JSON report.
//
// node sdk-client.mjs <sdk install dir> <acc-mcp> <acc> <workspace> <participant> <peer session> <peer generation>
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [sdkDir, accMcp, acc, workspace, participant, peerSession, peerGeneration] = process.argv.slice(2);
const req = createRequire(path.join(sdkDir, "package.json"));
const load = (p) => import(pathToFileURL(req.resolve(p)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");
const { ResourceUpdatedNotificationSchema } = await load("@modelcontextprotocol/sdk/types.js");

const report = { steps: [] };
const step = (name, value) => report.steps.push(name) && value;
const textOf = (res) => res.content.find((c) => c.type === "text").text;

// The peer is a CLI session: it runs acc itself, in the workspace.
const cli = (...args) => {
  const out = execFileSync(acc, [...args, "--session", peerSession, "--generation", peerGeneration, "--json"], { cwd: workspace });
  return JSON.parse(out.toString()).data;
};

const transport = new StdioClientTransport({
  command: accMcp,
  env: { ...process.env, ACC_MCP_PARTICIPANT: participant, ACC_MCP_WORKSPACE: workspace },
  stderr: "pipe",
});
let stderr = "";
transport.stderr?.on("data", (b) => (stderr += b));
const client = new Client({ name: "acc-sdk-probe", version: "0.0.1" });
try {
  await client.connect(transport);
  report.server = client.getServerVersion();

  report.tools = step("tools", (await client.listTools()).tools.map((t) => t.name).sort());
  report.closedSchemas = (await client.listTools()).tools.every((t) => t.inputSchema.additionalProperties === false);
  report.resources = step("resources", (await client.listResources()).resources.map((r) => r.uri).sort());
  report.resourceReads = {};
  for (const uri of report.resources) {
    const res = await client.readResource({ uri });
    report.resourceReads[uri] = JSON.parse(res.contents[0].text);
  }

  // The MCP participant exists once a call resolves it; it subscribes to
  // its inbox; then the CLI asks, and the subscription says so.
  await client.callTool({ name: "acc_status", arguments: {} });
  report.subscribeCapability = client.getServerCapabilities()?.resources?.subscribe === true;
  let notified;
  const updated = new Promise((resolve) => {
    notified = resolve;
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => notified(n.params.uri));
  await client.subscribeResource({ uri: "acc://inbox" });
  step("subscribed");
  const sent = Date.now();
  const q = cli("message", "--to", participant, "--type", "question", "--subject", "which port?", "--body", "8080 or 9090?");
  report.questionId = step("question", q.message.messageId);
  report.updatedUri = await Promise.race([updated, new Promise((r) => setTimeout(() => r(null), 10000))]);
  report.updatedAfterMs = Date.now() - sent;
  step("notified");

  const page = await client.callTool({ name: "acc_inbox", arguments: {} });
  report.summary = step("summary", JSON.parse(textOf(page)));
  const exact = await client.callTool({ name: "acc_inbox", arguments: { messageId: report.questionId } });
  report.exact = step("exact", JSON.parse(textOf(exact)));
  const reply = await client.callTool({ name: "acc_reply", arguments: { messageId: report.questionId, body: "9090" } });
  report.reply = step("reply", JSON.parse(textOf(reply)));

  const bad = await client.callTool({ name: "acc_status", arguments: { legacyField: true } });
  report.badIsError = bad.isError === true;
  report.badText = textOf(bad);

  report.peerInbox = step("peer", cli("inbox"));
} catch (e) {
  report.error = String(e?.stack ?? e);
} finally {
  await client.close().catch(() => {});
  report.stderr = stderr;
}
console.log(JSON.stringify(report));
process.exit(report.error ? 1 : 0);
