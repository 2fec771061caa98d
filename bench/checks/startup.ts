/**
 * Start-up timing checks, as spawned processes with the environment an MCP client gives the
 * servers it starts (rounds interleaved, medians). test/startup.test.ts holds what each command
 * loads, which is what decides these times and does not depend on the machine.
 */
import { join } from 'node:path';
import { connectStdio } from '../../test/helpers/mcp.js';
import { timeRawStartup } from '../../test/helpers/mcp-startup.js';
import { cliPath, repoRoot } from '../../test/helpers/repo.js';
import { interleaved, median, type BenchCheck } from '../lib/check.js';
import { timeProcess } from '../lib/process-time.js';

const version: BenchCheck = {
  name: 'startup.version',
  measures: '`faultline --version`, spawn to exit (median of 7)',
  peer: '`node -e 0`, interleaved with it',
  target: 'at most 3× bare node start-up (measured ~1.5×; 5–6× before commands loaded lazily)',
  tests: ['test/startup.test.ts'],
  async run() {
    const times = await interleaved(7, {
      bare: () => timeProcess(['-e', '0']),
      version: () => timeProcess([cliPath, '--version']),
    });
    return [
      {
        label: 'faultline --version',
        ours: { label: 'faultline', value: median(times.version), unit: 'ms' },
        peer: { label: 'node -e 0', value: median(times.bare), unit: 'ms' },
        target: { on: 'ratio', atMost: 3 },
      },
    ];
  },
};

const mcpToolsList: BenchCheck = {
  name: 'startup.mcp-tools-list',
  measures:
    '`faultline mcp` from spawn to its tools/list answer over raw ' +
    'JSON-RPC (initialize, initialized, tools/list; median of 5); ' +
    '`faultline agent tool` to tools/list through the SDK client',
  peer: 'the one-tool server on the same SDK (test/fixtures/server/one-tool-server.ts), interleaved',
  target: 'faultline mcp at most 1.5× the one-tool server (measured 1.03–1.06×); agent tool ready within 1 s',
  tests: ['test/startup.test.ts', 'test/server-stdio.test.ts'],
  async run(context) {
    const oneTool = join(repoRoot, 'dist', 'test', 'fixtures', 'server', 'one-tool-server.js');
    const cpu: Record<string, Array<{ main: number; others: number }>> = { oneTool: [], faultline: [], noThread: [] };
    const timed = async (side: string, args: string[], env?: Record<string, string>): Promise<number> => {
      const timing = await timeRawStartup(args, undefined, env);
      if (timing.cpuMs) cpu[side]!.push(timing.cpuMs);
      if (args[0] === cliPath && timing.tools < 20) throw new Error(`faultline mcp listed ${timing.tools} tools`);
      return timing.toolsListMs;
    };
    const times = await interleaved(5, {
      oneTool: () => timed('oneTool', [oneTool]),
      faultline: () => timed('faultline', [cliPath, 'mcp']),
      // What bounds the ratio: the listing thread's warm-up (and V8's compiles for it) shares the cores meanwhile.
      noThread: () => timed('noThread', [cliPath, 'mcp'], { FAULTLINE_LISTING_THREAD: 'off' }),
    });
    const cpuLine = (side: string): string =>
      cpu[side]!.length === 0
        ? 'not measured'
        : `main ${median(cpu[side]!.map((used) => used.main)).toFixed(0)} ms, ` +
          `other threads ${median(cpu[side]!.map((used) => used.others)).toFixed(0)} ms`;
    context.log(
      `without the listing thread (FAULTLINE_LISTING_THREAD=off): ${median(times.noThread).toFixed(0)} ms, ` +
        `${(median(times.noThread) / median(times.oneTool)).toFixed(2)}× the one-tool server`,
    );
    context.log(
      `CPU at the tools/list answer (medians): faultline ${cpuLine('faultline')}; without the listing thread ` +
        `${cpuLine('noThread')}; one-tool server ${cpuLine('oneTool')}`,
    );
    const started = performance.now();
    // A host's client: it compiles every output schema at listTools (the test helpers' share theirs).
    const session = await connectStdio(['agent', 'tool'], {}, { hostClient: true });
    let agentReady: number;
    try {
      await session.client.listTools();
      agentReady = performance.now() - started;
    } finally {
      await session.close();
    }
    return [
      {
        label: 'faultline mcp',
        ours: { label: 'faultline', value: median(times.faultline), unit: 'ms' },
        peer: { label: 'one-tool server', value: median(times.oneTool), unit: 'ms' },
        target: { on: 'ratio', atMost: 1.5 },
      },
      {
        label: 'faultline agent tool',
        ours: { label: 'tools/list after', value: agentReady, unit: 'ms' },
        target: { on: 'value', atMost: 1000 },
      },
    ];
  },
};

export const checks: BenchCheck[] = [version, mcpToolsList];
