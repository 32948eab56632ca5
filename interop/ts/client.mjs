// A third-party MCP client against opsearch, for interop_test.go:
//
//   node client.mjs <v1|v2> <http|stdio|config>
//
// config connects as an MCP client configuration says, exactly: the JSON
// of one mcpServers entry in OPSEARCH_CONFIG, either {type: "http", url,
// headers} or {command, args, env}.
// v1 is the official TypeScript SDK (@modelcontextprotocol/sdk), v2 its
// new client package (@modelcontextprotocol/client). Over http it talks
// to OPSEARCH_URL with the key OPSEARCH_KEY; over stdio it starts
// OPSEARCH_BIN serve with this process's environment. It lists the
// tools, searches OPSEARCH_QUERY until the index answers, and prints one
// JSON line: the package and version, the negotiated protocol version,
// the tool count and the search's result count.
import { readFileSync } from 'node:fs';

const [sdk, mode] = process.argv.slice(2);
const pkgName = sdk === 'v1' ? '@modelcontextprotocol/sdk' : '@modelcontextprotocol/client';
const pkg = JSON.parse(readFileSync(new URL(`./node_modules/${pkgName}/package.json`, import.meta.url)));

let Client, Streamable, Stdio;
if (sdk === 'v1') {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StreamableHTTPClientTransport: Streamable } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
  ({ StdioClientTransport: Stdio } = await import('@modelcontextprotocol/sdk/client/stdio.js'));
} else if (sdk === 'v2') {
  ({ Client, StreamableHTTPClientTransport: Streamable } = await import('@modelcontextprotocol/client'));
  ({ StdioClientTransport: Stdio } = await import('@modelcontextprotocol/client/stdio'));
} else {
  throw new Error(`unknown SDK ${sdk}: want v1 or v2`);
}

let transport;
if (mode === 'config') {
  const cfg = JSON.parse(process.env.OPSEARCH_CONFIG);
  transport = cfg.type === 'http'
    ? new Streamable(new URL(cfg.url), { requestInit: { headers: cfg.headers ?? {} } })
    : new Stdio({ command: cfg.command, args: cfg.args ?? [], env: cfg.env, stderr: 'ignore' });
} else if (mode === 'http') {
  transport = new Streamable(new URL(process.env.OPSEARCH_URL), { requestInit: { headers: { 'X-OpenProject-Api-Key': process.env.OPSEARCH_KEY } } });
} else {
  transport = new Stdio({ command: process.env.OPSEARCH_BIN, args: ['serve'], env: process.env, stderr: 'ignore' });
}
// The client tells its transport the version it negotiated.
let negotiated = '';
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { negotiated = v; setVersion?.(v); };

const client = new Client({ name: 'opsearch-interop', version: '0' });
await client.connect(transport);
const { tools } = await client.listTools();
let results = 0;
let meta = false;
for (let i = 0; i < 600; i++) {
  const res = await client.callTool({ name: 'openproject_search', arguments: { query: process.env.OPSEARCH_QUERY } });
  if (res.isError) throw new Error(`search failed: ${JSON.stringify(res.content)}`);
  const s = res.structuredContent;
  if (s?.index?.ready && s.index.complete) {
    results = s.results.length;
    meta = Boolean(res._meta?.['opsearch/index']);
    break;
  }
  await new Promise((r) => setTimeout(r, 100));
}
await client.close();
console.log(JSON.stringify({ package: pkgName, version: pkg.version, protocolVersion: negotiated, tools: tools.length, results, meta }));
