// Times openproject_search over stdio as the official TypeScript SDK's
// client sees it, for bench_test.go:
//
//   node stdio-bench.mjs
//
// It starts OPSEARCH_BIN serve with this process's environment (the data
// directory must already hold a complete index), lists the tools as MCP
// hosts do, waits until the index answers, warms up, then calls the tool
// OPSEARCH_CALLS times, cycling over the queries in OPSEARCH_QUERIES (a
// JSON array). It prints one JSON line: per-call wall times from the
// request's start to the client's parsed result, and the engine's own
// time each answer states (tookMs), both in milliseconds.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';

const queries = JSON.parse(process.env.OPSEARCH_QUERIES);
const calls = Number(process.env.OPSEARCH_CALLS);
if (!Array.isArray(queries) || queries.length === 0 || !(calls > 0)) {
  throw new Error('OPSEARCH_QUERIES must be a non-empty JSON array and OPSEARCH_CALLS a positive count');
}

const transport = new StdioClientTransport({ command: process.env.OPSEARCH_BIN, args: ['serve'], env: process.env, stderr: 'ignore' });
const client = new Client({ name: 'opsearch-stdio-bench', version: '0' });
await client.connect(transport);
await client.listTools();

async function search(query) {
  const res = await client.callTool({ name: 'openproject_search', arguments: { query } });
  if (res.isError) throw new Error(`search ${JSON.stringify(query)} failed: ${JSON.stringify(res.content)}`);
  return res.structuredContent;
}

// The server answers once OpenProject has confirmed whose key it is.
for (let i = 0; ; i++) {
  const index = (await search(queries[0]))?.index;
  if (index?.ready && index.complete) break;
  if (i === 600) throw new Error(`the index is not complete after a minute: ${JSON.stringify(index)}`);
  await new Promise((r) => setTimeout(r, 100));
}
for (const q of queries.slice(0, 8)) await search(q);

const wall = [];
const engine = [];
let bytes = 0;
for (let i = 0; i < calls; i++) {
  const start = performance.now();
  const s = await search(queries[i % queries.length]);
  wall.push(performance.now() - start);
  if (typeof s?.tookMs !== 'number') throw new Error('the answer does not say how long the engine took');
  engine.push(s.tookMs);
  if (i === 0) bytes = JSON.stringify(s).length;
}
await client.close();
const pkg = JSON.parse(readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url)));
console.log(JSON.stringify({ version: pkg.version, node: process.version, wall, engine, structuredBytes: bytes }));
