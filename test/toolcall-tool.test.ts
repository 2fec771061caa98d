/**
 * fault_run_tool_call_chaos_scenario through a real SDK client: stdio and HTTP targets, every
 * number in structuredContent, argument errors naming the argument, cancellation reaping the child.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { registerToolcallTools } from '../src/tools/toolcall.js';
import { commandsAllowed, connectTools, textOf } from './helpers/mcp.js';

const scratch: string[] = [];
/** A fresh scratch directory, removed when the file's tests end. */
function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolcall-tool-'));
  scratch.push(dir);
  return dir;
}
after(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});
import { mcpTargetPath, repoRoot } from './helpers/repo.js';
import { alive } from './helpers/processes.js';
import { startTargetHttp } from './helpers/mcp-target.js';
import { ProgramPolicy } from '../src/consent/index.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const targetPath = mcpTargetPath;
const NAME = 'fault_run_tool_call_chaos_scenario';

test('a stdio target: faults injected, SLIs in structuredContent, the report in text, the child reaped', async () => {
  const pidFile = join(scratchDir(), 'pids');
  process.env.TOOLPLANE_TARGET_PID_FILE = pidFile;
  const { client, close } = await connectTools(registerToolcallTools, commandsAllowed());
  try {
    const result = (await client.callTool({
      name: NAME,
      arguments: {
        // The server's environment is not passed on (src/consent): the pid file goes by env(1).
        command: '/usr/bin/env',
        args: [`TOOLPLANE_TARGET_PID_FILE=${pidFile}`, process.execPath, targetPath, 'stdio'],
        plan: 'seed: 4\nfaults:\n  - type: error_injection\n    rate: 1\n    tools: [echo]\n    after_calls: 3\n',
        calls: ['{"tool":"get_items","arguments":{"count":3}}', '{"tool":"echo","arguments":{"text":"x"}}'],
        tasks: 6,
      },
    })) as CallToolResult;
    assert.equal(result.isError, undefined, textOf(result));
    const s = result.structuredContent as Record<string, number>;
    assert.equal(s.calls, 12);
    assert.equal(s.tasks, 6);
    assert.equal(s.tcaf, 2);
    assert.equal(s.blast_radius, 0.5);
    assert.equal(s.tcsr, 0.75);
    assert.deepEqual(s.injected, { error_injection: 3 });
    assert.match(textOf(result), /TCSR \| 75\.0%/);
  } finally {
    await close();
    delete process.env.TOOLPLANE_TARGET_PID_FILE;
  }
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  assert.ok(!alive(pid), 'the target process is gone when the tool returns');
});

test('an HTTP target with resilience: retries counted as attempts', async () => {
  const target = await startTargetHttp();
  const { client, close } = await connectTools(registerToolcallTools, commandsAllowed());
  try {
    const result = (await client.callTool({
      name: NAME,
      arguments: {
        url: target.url,
        plan: '{"faults":[{"type":"error_injection","rate":1,"tools":["echo"],"every":2}]}',
        calls: ['{"tool":"echo","arguments":{"text":"x"}}'],
        tasks: 4,
        resilience: true,
      },
    })) as CallToolResult;
    assert.equal(result.isError, undefined, textOf(result));
    const s = result.structuredContent as Record<string, number>;
    assert.equal(s.transport as unknown, 'http');
    assert.equal(s.calls, 4);
    assert.equal(s.tcsr, 1);
    assert.ok(s.attempts! > 4);
  } finally {
    await close();
    await target.close();
  }
});

test('bad arguments are isError naming the argument', async () => {
  const { client, close } = await connectTools(registerToolcallTools, commandsAllowed());
  try {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ calls: ['{"tool":"x"}'] }, /command or url/],
      [{ command: 'node', url: 'http://127.0.0.1:1/mcp', calls: ['{"tool":"x"}'] }, /command or url/],
      [{ command: 'node', calls: ['nope'] }, /calls\[0\]: not JSON/],
      [{ command: 'node', calls: ['{"tool":"x","arguments":[1]}'] }, /calls\[0\]\.arguments/],
      [
        { command: 'node', calls: ['{"tool":"x"}'], plan: 'faults: [{type: boom}]' },
        /plan\.faults\[0\]: type must be one of latency/,
      ],
      [{ url: 'http://93.184.216.34/mcp', calls: ['{"tool":"x"}'] }, /url/],
      [{ command: '/nonexistent/mcp-server', calls: ['{"tool":"x"}'] }, /could not start \/nonexistent\/mcp-server/],
      [
        { command: process.execPath, args: ['-e', 'process.exit(3)'], calls: ['{"tool":"x"}'] },
        /exited before it answered initialize|closed/i,
      ],
      // A tool the server does not have (a typo) is named, with what the server has.
      [
        {
          command: process.execPath,
          args: [targetPath, 'stdio'],
          calls: ['{"tool":"echo","arguments":{"text":"x"}}', '{"tool":"ecko"}'],
        },
        /^calls: the server has no tool "ecko"; its tools\/list has .*\becho\b/,
      ],
    ];
    for (const [args, pattern] of cases) {
      const result = (await client.callTool({ name: NAME, arguments: args })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.match(textOf(result), pattern);
    }
  } finally {
    await close();
  }
});

test('cancelling a hung scenario stops it and reaps the child', async () => {
  const pidFile = join(scratchDir(), 'pids');
  process.env.TOOLPLANE_TARGET_PID_FILE = pidFile;
  const { client, close } = await connectTools(registerToolcallTools, commandsAllowed());
  try {
    const controller = new AbortController();
    const pending = client.callTool(
      {
        name: NAME,
        arguments: {
          // The server's environment is not passed on (src/consent): the pid file goes by env(1).
          command: '/usr/bin/env',
          args: [`TOOLPLANE_TARGET_PID_FILE=${pidFile}`, process.execPath, targetPath, 'stdio'],
          plan: '{"faults":[{"type":"timeout"}]}',
          calls: ['{"tool":"echo","arguments":{"text":"x"}}'],
          deadline_ms: 10000,
        },
      },
      undefined,
      { signal: controller.signal },
    );
    const start = Date.now();
    while (!existsSync(pidFile) && Date.now() - start < HANG_GUARD_MS) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    await assert.rejects(pending);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    const end = Date.now() + HANG_GUARD_MS;
    while (alive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    assert.ok(!alive(pid), 'child reaped after cancellation');
  } finally {
    await close();
    delete process.env.TOOLPLANE_TARGET_PID_FILE;
  }
});

test('a server that exits in the middle of a call: the call counts as unanswered, not as no call at all', async () => {
  // A real SDK server whose one tool kills the process before answering.
  const sdk = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
  const script = [
    `import { McpServer } from ${JSON.stringify(join(sdk, 'server', 'mcp.js'))};`,
    `import { StdioServerTransport } from ${JSON.stringify(join(sdk, 'server', 'stdio.js'))};`,
    `const mcp = new McpServer({ name: 'crasher', version: '1.0.0' });`,
    `mcp.registerTool('crash', { description: 'exits' }, async () => process.exit(3));`,
    `await mcp.connect(new StdioServerTransport());`,
  ].join('\n');
  const { client, close } = await connectTools(registerToolcallTools, commandsAllowed());
  try {
    const result = (await client.callTool({
      name: NAME,
      arguments: {
        command: process.execPath,
        args: ['--input-type=module', '-e', script],
        calls: ['{"tool":"crash","arguments":{}}'],
        tasks: 2,
      },
    })) as CallToolResult;
    assert.equal(result.isError, undefined, textOf(result));
    const s = result.structuredContent as Record<string, number>;
    // Both tasks' calls count: the one the server died in, and the one made after it had gone
    // (which used to show only as a client error, leaving the SLIs about one call).
    assert.equal(s.calls, 2, `every call the client made is counted: ${JSON.stringify(s)}`);
    assert.equal(s.availability, 0);
    assert.equal(s.tcsr, 0);
    assert.deepEqual(
      { ...(result.structuredContent as { upstream_failure: Record<string, unknown> }).upstream_failure, at: 'T' },
      { kind: 'exited', at: 'T', attempts_before: 0, exit_code: 3, unanswered: 2 },
    );
    assert.match(
      textOf(result),
      /\*\*The upstream server exited\*\* at \d{4}-\d\d-\d\dT[^ ]+ \(exit code 3\) after 0 tool-call attempts; 2 attempts found no server/,
    );
    assert.doesNotMatch(textOf(result), /no tool calls were observed/);
    assert.match(
      textOf(result),
      /\| correctness \(C\) \| n\/a \(no call was answered\) \|/,
      'not 0%: no answer was wrong, none came',
    );
  } finally {
    await close();
  }
});

test(
  'a long scenario leaves no abort listener behind: no leak ' + 'warning, the caller signal clean afterwards',
  async () => {
    const { runToolCallScenario } = await import('../src/toolcall/scenario.js');
    const { validatePlan } = await import('../src/toolcall/plan.js');
    const { EventEmitter } = await import('node:events');
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const caller = new AbortController();
    try {
      const result = await runToolCallScenario({
        programs: ProgramPolicy.owner(),
        target: { command: process.execPath, args: [targetPath, 'stdio'] },
        plan: validatePlan({ faults: [] }),
        calls: [{ tool: 'echo', arguments: { text: 'x' } }],
        tasks: 25,
        resilience: false,
        callTimeoutMs: 10_000,
        signal: caller.signal,
      });
      assert.equal(result.slis.calls, 25);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      assert.deepEqual(
        warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
        [],
      );
      assert.equal(EventEmitter.getEventListeners(caller.signal, 'abort').length, 0);
    } finally {
      process.off('warning', onWarning);
    }
  },
);
