// The console demo's MCP agent (tui/demo.c, docs/console.md): the official
// MCP TypeScript SDK's Client over StdioClientTransport, launching
// `/airlock/shim --mcp` as any MCP agent launches a stdio server. It lists
// the tools, then about once a second calls the first of PREFERRED that the
// list holds, with a small note; on notifications/tools/list_changed it
// lists them again. While the operator has revoked `save` the list leaves it
// out, so the agent calls `publish` (denied by the sink ceiling) or nothing:
// a revoke visibly changes what it does. It never ends by itself (the
// session's time bound ends it). It prints nothing: its stdout and stderr
// are discarded anyway.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const PREFERRED = ["save", "publish"];
const client = new Client({ name: "airlock-demo-agent", version: "0.1.0" });
let tools = [];
const list = async () => {
	tools = (await client.listTools()).tools.map((t) => t.name);
};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => list().catch(() => {}));
await client.connect(new StdioClientTransport({ command: "/airlock/shim", args: ["--mcp"] }));
await list();
for (let n = 0; ; n++) {
	const name = PREFERRED.find((t) => tools.includes(t));
	if (name)
		await client.callTool({ name, arguments: { note: `mcp demo ${n}`, listed: tools.length } });
	await new Promise((resolve) => setTimeout(resolve, 1000));
}
