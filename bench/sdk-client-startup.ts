/**
 * One MCP start-up as an SDK-based client has it, in a fresh process (so the client's own work —
 * parsing answers, compiling a validator per outputSchema — runs cold, as in a real client that
 * starts once): spawn `node ...argv`, initialize, tools/list. Prints {"totalMs","compileMs"}:
 * milliseconds from spawn to listTools() returning, and of those, the time the client spent in
 * Client.cacheToolMetadata (ajv compiling the tools' output schemas). Used by bench/startup.ts.
 */
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const args = process.argv.slice(2);
const started = performance.now();
const client = new Client({ name: 'bench', version: '0.0.0' });
let compileMs = 0;
// Timed in place: the SDK compiles every tool's outputSchema here when tools/list answers.
const inner = client as unknown as { cacheToolMetadata(tools: unknown[]): void };
const cache = inner.cacheToolMetadata.bind(client);
inner.cacheToolMetadata = (tools) => {
  const compiling = performance.now();
  cache(tools);
  compileMs += performance.now() - compiling;
};
await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
await client.listTools();
const totalMs = performance.now() - started;
await client.close();
process.stdout.write(`${JSON.stringify({ totalMs, compileMs })}\n`);
