/**
 * `faultline demo`: the main job with nothing but this repository — no LLM, no Qdrant, no
 * network beyond loopback. It starts a small app and the upstream it depends on, starts the MCP
 * server in process and connects a real MCP client, then asks for a latency scenario on the
 * app's upstream calls (through a mapped proxy port), with a baseline, and prints the report.
 */
import type { Command } from 'commander';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from '../server.js';
import { makeConfig } from '../config.js';
import { startDemoServices } from '../demo/services.js';
import { runCommand, EXIT_USAGE } from './run-command.js';
import { type GlobalOptions } from './flags.js';

const DEMO_DURATION = '5s';

export function registerDemoCommand(program: Command, _globals: () => GlobalOptions): void {
  program
    .command('demo')
    .summary('a latency scenario on a bundled app, through MCP (no LLM, no network; about 15 s)')
    .description(
      'Start a small checkout app and the pricing service it calls, ' +
        'connect an MCP client to faultline in process, and run ' +
        `fault_run_latency_impact_scenario: ${DEMO_DURATION} of load on ` +
        `the app, first without a fault (the baseline), then with ` +
        "80 ms of latency on the app's calls to its upstream. Prints the markdown report.",
    )
    .action(() => runCommand(runDemo));
}

async function runDemo(): Promise<void> {
  const services = await startDemoServices();
  const { mcp } = createServer(makeConfig());
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  const client = new Client({ name: 'faultline-demo', version: '1' });
  await client.connect(clientSide);
  const note = (text: string): void => void process.stderr.write(`${text}\n`);
  try {
    const { tools } = await client.listTools();
    note(`faultline offers ${tools.length} tools: ${tools.map((tool) => tool.name).join(', ')}`);
    note(
      `app: ${services.appUrl} → its upstream through 127.0.0.1:${services.upstreamVia} ` +
        `(the fault proxy) → 127.0.0.1:${services.upstreamPort}`,
    );
    note(
      `calling fault_run_latency_impact_scenario (baseline ` +
        `${DEMO_DURATION}, then ${DEMO_DURATION} with 80 ms on the ` +
        `upstream calls)…`,
    );
    const result = (await client.callTool(
      {
        name: 'fault_run_latency_impact_scenario',
        arguments: {
          url: services.appUrl,
          proxies: [`${services.upstreamVia}=127.0.0.1:${services.upstreamPort}`],
          latency: 80,
          deviation: 10,
          duration: DEMO_DURATION,
          num_clients: 10,
          rps: 5,
          baseline: true,
          slos: ['99% @ 350ms', '95% @ 100ms'],
        },
      },
      undefined,
      { onprogress: (progress) => note(`  ${progress.message ?? ''}`), timeout: 120_000 },
    )) as CallToolResult;
    const first = result.content[0];
    const text = first?.type === 'text' ? first.text : '';
    if (result.isError) {
      note(`the scenario failed: ${text}`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    process.stdout.write(`${text}\n`);
  } finally {
    await client.close();
    await mcp.close();
    await services.close();
  }
}
