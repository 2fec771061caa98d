/**
 * `faultline demo`: shows what faultline does with nothing but this repository — no LLM, no
 * Qdrant, no network. It starts the MCP server in process, connects a real MCP client to it,
 * lists the tools and reads a bundled sample with the code tools, printing each step.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from '../server.js';
import { makeConfig } from '../config.js';
import { runCommand, type GlobalOptions } from './common.js';

const SAMPLE = join(fileURLToPath(new URL('../../../examples/', import.meta.url)), 'checkout.py');

export function registerDemoCommand(program: Command, _globals: () => GlobalOptions): void {
  program
    .command('demo')
    .summary('a tour of the tools on a bundled sample (no LLM, no network)')
    .description('Start the MCP server in process, connect an MCP client, list the tools and call the code tools on examples/checkout.py.')
    .action(() => runCommand(runDemo));
}

async function runDemo(): Promise<void> {
  const { mcp } = createServer(makeConfig());
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  const client = new Client({ name: 'faultline-demo', version: '1' });
  await client.connect(clientSide);
  const say = (text: string): void => void process.stdout.write(`${text}\n`);
  try {
    const { tools } = await client.listTools();
    say(`# faultline demo\n\nThe server offers ${tools.length} tools:\n`);
    for (const tool of tools) say(`- ${tool.name}: ${tool.title ?? ''}`);

    say(`\n## fault_list_function_names ${SAMPLE}\n`);
    const listed = (await client.callTool({ name: 'fault_list_function_names', arguments: { file: SAMPLE } })) as CallToolResult;
    say(textOf(listed));
    const functions = (listed.structuredContent as { functions: Array<{ qualified_name: string; start_line: number; end_line: number }> }).functions;
    for (const f of functions) say(`  ${f.qualified_name.padEnd(28)} lines ${f.start_line}-${f.end_line}`);

    say(`\n## fault_extract_code_block checkout\n`);
    const extracted = (await client.callTool({ name: 'fault_extract_code_block', arguments: { file: SAMPLE, func: 'checkout' } })) as CallToolResult;
    say((JSON.parse(textOf(extracted)) as { full: string }).full);

    say(`## fault_score_reliability without an LLM configured\n`);
    const scored = (await client.callTool({ name: 'fault_score_reliability', arguments: { snippet: 'def f(): pass', lang: 'python' } })) as CallToolResult;
    say(`isError: ${scored.isError === true}: ${textOf(scored)}`);
  } finally {
    await client.close();
    await mcp.close();
  }
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}
