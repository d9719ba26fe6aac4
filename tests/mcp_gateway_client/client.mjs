// A second real MCP client of the gateway: the TypeScript SDK's, over stdio.
// Starts GATEWAY_COMMAND (a JSON list) with GATEWAY_ENV (a JSON object), lists the tools,
// calls argv[2] with the JSON arguments argv[3], and prints both as one JSON line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = JSON.parse(process.env.GATEWAY_COMMAND);
const transport = new StdioClientTransport({
  command,
  args,
  env: JSON.parse(process.env.GATEWAY_ENV),
  stderr: "inherit",
});
const client = new Client({ name: "ts-agent", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const result = await client.callTool(
  { name: process.argv[2], arguments: JSON.parse(process.argv[3]) },
  undefined,
  { timeout: 120000 },
);
console.log(JSON.stringify({ tools: listed.tools.map((tool) => tool.name), result }));
await client.close();
