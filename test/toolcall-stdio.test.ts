/**
 * The stdio proxy with our own SDK-built server behind it, driven by the official SDK client:
 * each fault's effect is asserted on what the client receives.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cliPath, mcpTargetPath } from './helpers/repo.js';
import { alive, running, type CliOutcome } from './helpers/processes.js';
import { runCliBatch } from './helpers/cli-batch.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const targetPath = mcpTargetPath;
const dir = mkdtempSync(join(tmpdir(), 'toolcall-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let planCount = 0;

interface Proxied {
  client: Client;
  journal: string;
  stderr(): string;
  childPid(): number | undefined;
  close(): Promise<void>;
}

async function proxied(plan: unknown, extra: string[] = []): Promise<Proxied> {
  const planFile = join(dir, `plan-${++planCount}.json`);
  writeFileSync(planFile, JSON.stringify(plan));
  const journal = join(dir, `journal-${planCount}.jsonl`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      cliPath,
      'mcp-chaos',
      'proxy',
      'stdio',
      '--plan',
      planFile,
      '--journal',
      journal,
      ...extra,
      '--',
      process.execPath,
      targetPath,
      'stdio',
    ],
    stderr: 'pipe',
    // The test run's environment (its data directory), not the SDK's default few variables.
    env: { ...process.env } as Record<string, string>,
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'toolcall-test', version: '0' });
  await client.connect(transport);
  await client.listTools();
  return {
    client,
    journal,
    stderr: () => stderr,
    childPid: () => {
      const match = /target pid (\d+)/.exec(stderr);
      return match ? Number(match[1]) : undefined;
    },
    close: () => client.close(),
  };
}

const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;
const journalOf = (file: string): Array<Record<string, unknown>> =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

async function waitFor(check: () => boolean, ms = HANG_GUARD_MS): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

test(
  'an empty plan relays everything unchanged, stderr passes ' + 'through, and the journal records each call',
  async () => {
    const p = await proxied({ faults: [] });
    try {
      const { tools } = await p.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['chatty', 'delete_record', 'echo', 'get_items', 'slow']);
      const result = await p.client.callTool({ name: 'get_items', arguments: { count: 4 } });
      assert.deepEqual(result.structuredContent, { items: [1, 2, 3, 4], total: 4 });
      assert.equal(text(await p.client.callTool({ name: 'echo', arguments: { text: 'hi' } })), 'hi');
      assert.match(p.stderr(), /target pid \d+/);
    } finally {
      await p.close();
    }
    const records = journalOf(p.journal);
    assert.deepEqual(
      records.map((r) => [r.tool, r.fault, r.outcome, r.success]),
      [
        ['get_items', 'none', 'ok', true],
        ['echo', 'none', 'ok', true],
      ],
    );
    assert.match(p.stderr(), /TCSR \| 100\.0%/);
    // The client closing stdin stops the server: that exit is ours, not a failure.
    assert.doesNotMatch(p.stderr(), /upstream server exited/);
  },
);

test(
  'latency really delays the answer; schema_drift fails the ' + 'outputSchema; partial_result truncates silently',
  async () => {
    const p = await proxied({
      seed: 1,
      faults: [
        { type: 'latency', tools: ['echo'], added_ms: 300 },
        { type: 'schema_drift', tools: ['get_items'], after_calls: 1, every: 2 },
        { type: 'partial_result', tools: ['get_*'], after_calls: 2, every: 2 },
      ],
    });
    try {
      await p.client.callTool({ name: 'get_items', arguments: { count: 2 } }); // 1st: untouched
      const start = performance.now();
      assert.equal(text(await p.client.callTool({ name: 'echo', arguments: { text: 'x' } })), 'x');
      const delayed = performance.now() - start;
      assert.ok(delayed >= 290, `delayed call took ${delayed} ms`);
      // 2nd get_items call: schema_drift (the SDK client checks structuredContent against the outputSchema).
      await assert.rejects(
        p.client.callTool({ name: 'get_items', arguments: { count: 3 } }),
        /output schema|structured content/i,
      );
      // 3rd: partial_result: half the array, no marker, still valid against the schema.
      const partial = await p.client.callTool({ name: 'get_items', arguments: { count: 10 } });
      assert.deepEqual(partial.structuredContent, { items: [1, 2, 3, 4, 5], total: 10 });
      assert.deepEqual(JSON.parse(text(partial)), { items: [1, 2, 3, 4, 5], total: 10 });
    } finally {
      await p.close();
    }
    const records = journalOf(p.journal);
    assert.deepEqual(
      records.map((r) => [r.fault, r.schema_ok, r.correct]),
      [
        ['none', true, true],
        ['latency', true, true],
        ['schema_drift', false, false],
        ['partial_result', true, false],
      ],
    );
    assert.ok((records[1]!.injected_delay_ms as number) === 300);
  },
);

test(
  'drop_tool hides the tool and calls get the unknown-tool error; ' +
    'registry_inconsistency keeps it listed and errors',
  async () => {
    const p = await proxied({
      faults: [
        { type: 'drop_tool', tools: ['echo'] },
        { type: 'registry_inconsistency', tools: ['delete_record'] },
      ],
    });
    try {
      const names = (await p.client.listTools()).tools.map((t) => t.name);
      assert.ok(!names.includes('echo'));
      assert.ok(names.includes('delete_record'));
      const dropped = (await p.client.callTool({ name: 'echo', arguments: { text: 'x' } })) as CallToolResult;
      assert.equal(dropped.isError, true);
      assert.equal(text(dropped), 'Tool echo not found');
      const inconsistent = (await p.client.callTool({
        name: 'delete_record',
        arguments: { id: '1' },
      })) as CallToolResult;
      assert.equal(inconsistent.isError, true);
      assert.match(text(inconsistent), /registry inconsistency/);
    } finally {
      await p.close();
    }
  },
);

test('error_shape jsonrpc gives a JSON-RPC error with the plan code; is_error gives a tool result', async () => {
  const p = await proxied({
    faults: [
      { type: 'error_injection', rate: 1, tools: ['echo'], error_shape: 'jsonrpc', code: -32050 },
      { type: 'rate_limit', tools: ['get_items'] },
    ],
  });
  try {
    await assert.rejects(
      p.client.callTool({ name: 'echo', arguments: { text: 'x' } }),
      (error: unknown) => error instanceof McpError && error.code === -32050,
    );
    const limited = (await p.client.callTool({ name: 'get_items', arguments: { count: 1 } })) as CallToolResult;
    assert.equal(limited.isError, true);
    assert.match(text(limited), /retry after 5s/);
  } finally {
    await p.close();
  }
  assert.deepEqual(
    journalOf(p.journal).map((r) => [r.outcome, r.error_shape]),
    [
      ['jsonrpc_error', 'jsonrpc'],
      ['is_error', 'is_error'],
    ],
  );
});

test('list_changed hides a tool mid-session and sends notifications/tools/list_changed', async () => {
  const p = await proxied({ faults: [{ type: 'list_changed', tools: ['echo'], add: ['new_tool'], after_calls: 1 }] });
  try {
    let notified = 0;
    p.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (notified += 1));
    await p.client.callTool({ name: 'get_items', arguments: { count: 1 } });
    assert.equal(notified, 0);
    await p.client.callTool({ name: 'get_items', arguments: { count: 1 } });
    assert.ok(await waitFor(() => notified === 1), 'list_changed received');
    const names = (await p.client.listTools()).tools.map((t) => t.name);
    assert.ok(!names.includes('echo'));
    assert.ok(names.includes('new_tool'));
    const gone = (await p.client.callTool({ name: 'echo', arguments: { text: 'x' } })) as CallToolResult;
    assert.equal(gone.isError, true);
  } finally {
    await p.close();
  }
});

test(
  'timeout hangs until the client cancels (no answer), or answers ' +
    'an error after hang_ms; content faults mutate text',
  async () => {
    const p = await proxied({
      faults: [
        { type: 'timeout', tools: ['slow'] },
        { type: 'timeout', tools: ['echo'], hang_ms: 150, after_calls: 2 },
        { type: 'corrupt', tools: ['get_items'], every: 3 },
        { type: 'prompt_injection', tools: ['get_items'], after_calls: 1, every: 3, payload: 'IGNORE PREVIOUS' },
        { type: 'empty_result', tools: ['echo'], every: 2 },
        { type: 'oversized', tools: ['chatty'], bytes: 5000 },
      ],
    });
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      await assert.rejects(
        p.client.callTool({ name: 'slow', arguments: { ms: 1 } }, undefined, { signal: controller.signal }),
      );
      // echo: 1st empty_result, 2nd untouched, 3rd hangs 150 ms then errors.
      const empty = (await p.client.callTool({ name: 'echo', arguments: { text: 'x' } })) as CallToolResult;
      assert.deepEqual(empty.content, []);
      assert.equal(text(await p.client.callTool({ name: 'echo', arguments: { text: 'y' } })), 'y');
      const timedOut = (await p.client.callTool({ name: 'echo', arguments: { text: 'z' } })) as CallToolResult;
      assert.equal(timedOut.isError, true);
      assert.match(text(timedOut), /timed out after 150 ms/);
      // get_items has an outputSchema, so corrupt/injected text keeps structuredContent: read the text.
      const corrupt = await p.client.callTool({ name: 'get_items', arguments: { count: 3 } });
      assert.throws(() => JSON.parse(text(corrupt)));
      const injected = await p.client.callTool({ name: 'get_items', arguments: { count: 3 } });
      assert.match(text(injected), /IGNORE PREVIOUS$/);
      const big = (await p.client.callTool({ name: 'chatty', arguments: {} })) as CallToolResult;
      assert.equal((big.content[1] as { text: string }).text.length, 5000);
    } finally {
      await p.close();
    }
    const records = journalOf(p.journal);
    assert.deepEqual(records[0]!.outcome, 'no_answer');
    assert.equal(records[0]!.responded, false);
  },
);

test('the same seed and traffic give the same journal', async () => {
  const runOnce = async (): Promise<string[]> => {
    const p = await proxied({
      seed: 7,
      faults: [
        { type: 'error_injection', rate: 0.5 },
        { type: 'partial_result', probability: 0.3, tools: ['get_items'] },
      ],
    });
    try {
      for (let i = 0; i < 16; i++)
        await p.client.callTool({
          name: i % 2 ? 'echo' : 'get_items',
          arguments: i % 2 ? { text: `${i}` } : { count: i },
        });
    } finally {
      await p.close();
    }
    return journalOf(p.journal).map((r) => `${r.tool} ${r.fault} ${r.outcome}`);
  };
  const first = await runOnce();
  const second = await runOnce();
  assert.deepEqual(first, second);
  assert.ok(
    first.some((line) => line.includes('error_injection')) && first.some((line) => line.endsWith('none ok')),
    first.join('\n'),
  );
});

test('retries are counted apart; blind retries of a destructive tool and runaway loops are reported', async () => {
  const p = await proxied({ faults: [{ type: 'error_injection', rate: 1, tools: ['delete_record'] }] }, [
    '--metrics',
    join(dir, 'metrics.json'),
  ]);
  try {
    for (let i = 0; i < 4; i++)
      await p.client.callTool({ name: 'delete_record', arguments: { id: '9' }, _meta: { task_id: 'A' } });
    await p.client.callTool({ name: 'echo', arguments: { text: 'ok' }, _meta: { task_id: 'B' } });
  } finally {
    await p.close();
  }
  assert.ok(await waitFor(() => /runaway/.test(p.stderr())));
  const metrics = JSON.parse(readFileSync(join(dir, 'metrics.json'), 'utf8'));
  assert.equal(metrics.calls, 2);
  assert.equal(metrics.attempts, 5);
  assert.equal(metrics.tasks, 2);
  assert.equal(metrics.blast_radius, 0.5);
  assert.deepEqual(metrics.verdicts, [
    {
      tool: 'delete_record',
      fault: 'error_injection',
      failures: 1,
      stopped: 0,
      retried: 0,
      runaway: 1,
      blind_retries: 3,
    },
  ]);
});

test(
  '--json writes a run record that faultline coverage counts: the ' +
    'faults the run injected, mapped to taxonomy leaves',
  async () => {
    const record = join(dir, 'runs', 'plan.json');
    mkdirSync(join(dir, 'runs'), { recursive: true });
    const p = await proxied(
      {
        seed: 1,
        faults: [
          { type: 'schema_drift', tools: ['get_items'] },
          { type: 'latency', tools: ['echo'], added_ms: 10 },
          { type: 'rate_limit', tools: ['nothing_called'] },
        ],
      },
      ['--json', record],
    );
    try {
      await assert.rejects(
        p.client.callTool({ name: 'get_items', arguments: { count: 3 } }),
        /output schema|structured content/i,
      );
      assert.equal(text(await p.client.callTool({ name: 'echo', arguments: { text: 'x' } })), 'x');
    } finally {
      await p.close();
    }
    assert.ok(await waitFor(() => existsSync(record) && /runaway|TCSR/.test(p.stderr())), p.stderr());
    const written = JSON.parse(readFileSync(record, 'utf8'));
    assert.equal(written.format, 'faultline-run-record');
    assert.equal(written.version, 1);
    assert.equal(written.kind, 'toolcall');
    assert.match(written.name, /^toolcall proxy stdio .*mcp-target(\.bundle\.mjs|\.js) stdio$/);
    assert.deepEqual(
      written.injected,
      ['latency', 'schema_drift'],
      'only the faults that fired (rate_limit never did)',
    );
    assert.equal(written.slis.calls, 2);
    assert.deepEqual(written.slis.injected, { latency: 1, schema_drift: 1 });
    writeFileSync(
      join(dir, 'suite.yaml'),
      'version: 1\nruns:\n  - { name: chaos-plan, kind: toolcall, record: runs/plan.json }\n',
    );
    const coverage = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [cliPath, 'coverage', join(dir, 'suite.yaml'), '--format', 'json'],
        { timeout: HANG_GUARD_MS },
        (error, stdout, stderr) => (error ? reject(new Error(stderr)) : resolve(stdout)),
      ),
    );
    const report = JSON.parse(coverage) as {
      runs: Array<{ ran: boolean; problem?: string }>;
      leaves: Array<{ id: string; by: Array<{ run: string; status: string }> }>;
    };
    assert.deepEqual(
      report.runs.map((r) => [r.ran, r.problem]),
      [[true, undefined]],
    );
    const by = (id: string): string[] => report.leaves.find((l) => l.id === id)!.by.map((b) => `${b.run}: ${b.status}`);
    assert.deepEqual(by('FAULT-SCHEMA-OUTPUT-MISMATCH'), ['chaos-plan: injected schema_drift']);
    assert.deepEqual(by('FAULT-TOOL-HANG'), ['chaos-plan: injected latency']);
    assert.deepEqual(by('FAULT-TOOL-PROTOCOL-ERROR'), [], 'rate_limit was planned but never injected');
  },
);

/**
 * The refusals before any server runs (an output file that cannot be written, a bad plan, a server
 * command that cannot start), through main() in one child (test/helpers/cli-batch.ts) instead of a
 * process each (~0.35 s of CPU per start); the three tests below each assert their own. Started by
 * the first of them, for all three.
 */
const UNWRITABLE_FLAGS = ['--json', '--metrics', '--report', '--journal'] as const;
const UNSTARTABLE = ['/nonexistent/faultline-no-such-server', join(dir, 'not-executable-plan.json')] as const;
let refusals: Promise<CliOutcome[]> | undefined;
function refusalOutcomes(): Promise<CliOutcome[]> {
  if (refusals) return refusals;
  const emptyPlan = join(dir, 'empty-plan.json');
  writeFileSync(emptyPlan, '{}');
  const badPlan = join(dir, 'bad.yaml');
  writeFileSync(badPlan, 'faults:\n  - type: latency\n    probability: 2\n');
  writeFileSync(UNSTARTABLE[1], '{"faults":[]}');
  const target = ['--', process.execPath, targetPath, 'stdio'];
  const proxy = ['mcp-chaos', 'proxy', 'stdio', '--plan'];
  refusals = runCliBatch([
    ...UNWRITABLE_FLAGS.map((flag) => ({
      args: [...proxy, emptyPlan, flag, join(dir, 'no-such-dir', 'out'), ...target],
    })),
    { args: [...proxy, badPlan, ...target] },
    // Last: these reach the proxy's start, which reads stdin.
    ...UNSTARTABLE.map((command) => ({ args: [...proxy, UNSTARTABLE[1], '--', command] })),
  ]);
  return refusals;
}

test('an output file that cannot be written is refused before the server starts, naming the flag', async () => {
  const outcomes = await refusalOutcomes();
  UNWRITABLE_FLAGS.forEach((flag, i) => {
    const result = outcomes[i]!;
    assert.equal(result.code, 2, `${flag}: ${result.stderr}`);
    assert.match(result.stderr, new RegExp(`${flag} .*no-such-dir.*cannot be written`));
  });
});

/** A raw JSON-RPC conversation with the proxy in front of a server that answers malformed results. */
async function rawStrictCheck(strict: boolean): Promise<Record<string, unknown>> {
  const planFile = join(dir, `raw-${strict}.json`);
  writeFileSync(planFile, JSON.stringify({ faults: [{ type: 'corrupt' }] }));
  // A server whose tool result has content as a string, which the mutation code cannot handle.
  const server =
    `require('readline').createInterface({input:process.stdin}).on('line',l=>{const ` +
    `m=JSON.parse(l);if(m.id!==undefined)process.stdout.write(JSON.stringify({jsonrpc:'2.0',id:m.id,result:{content:'not-an-array'}})+'\\n')})`;
  const args = [
    cliPath,
    'mcp-chaos',
    'proxy',
    'stdio',
    '--plan',
    planFile,
    ...(strict ? ['--strict'] : []),
    '--',
    process.execPath,
    '-e',
    server,
  ];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout });
  const first = new Promise<string>((resolve) => lines.once('line', resolve));
  child.stdin.write(
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } }) + '\n',
  );
  const answer = JSON.parse(await first) as Record<string, unknown>;
  child.stdin.end();
  await new Promise((resolve) => child.once('close', resolve));
  return answer;
}

test(
  'fail-safe forwards the original answer on an internal error; ' + '--strict fails closed with a JSON-RPC error',
  async () => {
    const safe = await rawStrictCheck(false);
    assert.deepEqual(safe.result, { content: 'not-an-array' });
    const strict = await rawStrictCheck(true);
    assert.equal((strict.error as { code: number }).code, -32603);
  },
);

test('the child is reaped when the client closes stdin and when the proxy is sent SIGTERM', async () => {
  const p = await proxied({ faults: [] });
  const pid = p.childPid();
  assert.ok(pid && alive(pid));
  await p.close();
  assert.ok(await waitFor(() => !alive(pid)), 'child gone after the client closed');

  const planFile = join(dir, 'empty.json');
  writeFileSync(planFile, '{}');
  const proxy = spawn(
    process.execPath,
    [cliPath, 'mcp-chaos', 'proxy', 'stdio', '--plan', planFile, '--', process.execPath, targetPath, 'stdio'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  proxy.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  assert.ok(await waitFor(() => /target pid \d+/.test(stderr)));
  const childPid = Number(/target pid (\d+)/.exec(stderr)![1]);
  proxy.kill('SIGTERM');
  await new Promise((resolve) => proxy.once('close', resolve));
  assert.ok(await waitFor(() => !alive(childPid)), 'child gone after SIGTERM');
  proxy.stdin.destroy();
});

test('what the server started goes with it, whether the client leaves or the server exits by itself', async () => {
  // `sh -c` starts a sleeper in the background (it holds the server's stdout too), then becomes
  // the server, or exits with 3: the sleeper is in the server's process group but is not the
  // process the proxy spawned.
  const planFile = join(dir, 'empty-for-group.json');
  writeFileSync(planFile, '{}');
  for (const ending of ['the client leaves', 'the server exits by itself'] as const) {
    const pidFile = join(dir, `sleeper-${ending.length}.pid`);
    const then = ending === 'the client leaves' ? `exec '${process.execPath}' '${targetPath}' stdio` : 'exit 3';
    const proxy = spawn(
      process.execPath,
      [
        cliPath,
        'mcp-chaos',
        'proxy',
        'stdio',
        '--plan',
        planFile,
        '--',
        'sh',
        '-c',
        `sleep 300 & echo $! > '${pidFile}'; ${then}`,
      ],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    proxy.stderr.resume();
    proxy.stdout.resume();
    const closed = new Promise<number | null>((resolve) => proxy.once('close', resolve));
    let sleeper: number | undefined;
    try {
      assert.ok(
        await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== ''),
        `${ending}: the launcher started its sleeper`,
      );
      sleeper = Number(readFileSync(pidFile, 'utf8').trim());
      if (ending === 'the client leaves') proxy.stdin.end(); // the server's stdin closes and it exits
      // Not 300 s: the proxy ends once the server and what it started are gone.
      const code = await Promise.race([
        closed,
        new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref()),
      ]);
      assert.notEqual(code, 'hung', `${ending}: the proxy ended`);
      if (ending === 'the server exits by itself') assert.equal(code, 3, "the proxy exits with the server's code");
      // Gone by the time the proxy has exited (a zombie that init has not reaped yet runs nothing).
      assert.equal(running(sleeper), false, `${ending}: the sleeper was stopped with the server`);
    } finally {
      proxy.kill('SIGKILL');
      if (sleeper !== undefined && running(sleeper)) process.kill(sleeper, 'SIGKILL');
    }
  }
});

test('a bad plan is a usage error naming the field', async () => {
  const { code, stderr } = (await refusalOutcomes())[UNWRITABLE_FLAGS.length]!;
  assert.equal(code, 2);
  assert.match(stderr, /faults\[0\] \(latency\): probability must be a number from 0 to 1 \(got 2\)/);
});

test('a server command that cannot run is a usage error naming it (exit 2)', async () => {
  const outcomes = (await refusalOutcomes()).slice(UNWRITABLE_FLAGS.length + 1);
  assert.equal(outcomes.length, 2);
  for (const [i, code] of (['ENOENT', 'EACCES'] as const).entries()) {
    const { code: exit, stderr } = outcomes[i]!;
    assert.equal(exit, 2, stderr);
    assert.match(stderr, new RegExp(`command: could not start .*${code}`));
  }
});

test('a cancellation during an injected delay drops the answer; the next call is served', async () => {
  const p = await proxied({ faults: [{ type: 'latency', tools: ['echo'], added_ms: 30_000, every: 2 }] });
  try {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const start = performance.now();
    await assert.rejects(
      p.client.callTool({ name: 'echo', arguments: { text: 'late' } }, undefined, { signal: controller.signal }),
    );
    assert.equal(text(await p.client.callTool({ name: 'echo', arguments: { text: 'next' } })), 'next');
    assert.ok(performance.now() - start < 15_000, "the second call did not wait for the first one's 30 s delay");
  } finally {
    await p.close();
  }
  const records = journalOf(p.journal);
  assert.deepEqual(
    records.map((r) => [r.outcome, r.fault]),
    [
      ['no_answer', 'latency'],
      ['ok', 'none'],
    ],
  );
});

test('when the server exits by itself the proxy exits with its code', async () => {
  const planFile = join(dir, 'exit.json');
  writeFileSync(planFile, '{}');
  const proxy = spawn(
    process.execPath,
    [cliPath, 'mcp-chaos', 'proxy', 'stdio', '--plan', planFile, '--', process.execPath, '-e', 'process.exit(3)'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  proxy.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise((resolve) => proxy.once('close', resolve));
  assert.equal(code, 3);
  // The report says why there was nothing more: the server died, we did not stop it.
  assert.match(stderr, /\*\*The upstream server exited\*\* at \S+ \(exit code 3\) after 0 tool-call attempts/);
});

test(
  'a call cancelled while the server works on it is journalled as ' + 'no answer and leaves no pending state',
  async () => {
    const p = await proxied({ faults: [] }, ['--metrics', join(dir, 'cancel-metrics.json')]);
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 150);
      await assert.rejects(
        p.client.callTool({ name: 'slow', arguments: { ms: 5000 } }, undefined, { signal: controller.signal }),
      );
      assert.equal(text(await p.client.callTool({ name: 'echo', arguments: { text: 'after' } })), 'after');
    } finally {
      await p.close();
    }
    assert.deepEqual(
      journalOf(p.journal).map((r) => [r.tool, r.outcome]),
      [
        ['slow', 'no_answer'],
        ['echo', 'ok'],
      ],
    );
    const metrics = JSON.parse(readFileSync(join(dir, 'cancel-metrics.json'), 'utf8'));
    assert.equal(metrics.availability, 0.5);
  },
);
