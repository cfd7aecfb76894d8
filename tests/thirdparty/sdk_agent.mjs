// An MCP agent nobody here wrote the client of: the official TypeScript SDK's
// Client over StdioClientTransport, launching `/airlock/shim --mcp` as any
// MCP agent launches a stdio server (tests/docker/mcp.sh). It reports what
// it saw through the `save` tool, so the test reads it in that upstream's
// sink: the tool list, the payload resource, a denied and an allowed call,
// then a revoke and a restore announced by notifications/tools/list_changed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const shim = process.argv[2] || "/airlock/shim";
const client = new Client({ name: "airlock-sdk-agent", version: "0.1.0" });
let changes = 0;
let wake = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
	changes++;
	wake();
});
await client.connect(new StdioClientTransport({ command: shim, args: ["--mcp"] }));

const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();
const report = (o) => client.callTool({ name: "save", arguments: { report: JSON.stringify(o) } });
const changed = (n) => new Promise((resolve) => {
	const check = () => (changes >= n ? resolve() : (wake = check));
	check();
});
const text = (r) => (r.content && r.content[0] ? r.content[0].text : null);

const tools = await names();
const described = (await client.listTools()).tools.find((t) => t.name === "shout");
const res = await client.readResource({ uri: "airlock://payload" });
const payload = JSON.parse(res.contents[0].text);
await report({ step: "start", tools, canary: payload.canary, withheld: "secret" in payload,
	       shout_description: described ? described.description : null,
	       shout_schema: described ? Object.keys(described.inputSchema.properties || {}) : null });
const pub = await client.callTool({ name: "publish", arguments: { text: payload.canary } });
const shout = await client.callTool({ name: "shout", arguments: { message: "hello" } });
let unknown = null;
try {
	await client.callTool({ name: "store", arguments: {} });
} catch (e) {
	unknown = e.code;
}
await report({ step: "calls", publish_error: !!pub.isError, publish_text: text(pub),
	       shout: text(shout), shout_error: !!shout.isError, unknown });
await changed(1);
const revoked = await names();
const again = await client.callTool({ name: "shout", arguments: { message: "again" } });
await report({ step: "revoked", tools: revoked, shout_error: !!again.isError, text: text(again) });
await changed(2);
await report({ step: "restored", tools: await names() });
await client.close();
