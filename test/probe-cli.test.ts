/**
 * `faultline probe` and `faultline coverage` from the shell, and the fault_probe_mcp_server tool:
 * - dogfood: the built CLI probes faultline itself over stdio and over HTTP and reports no failure;
 * - a faulty server: exit 1 and the finding in --json; bad arguments: exit 2;
 * - coverage of a suite that exercises some families and not others: numbers and exit 6.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliPath, fixturePath } from './helpers/repo.js';
import { commandsAllowed, connectInMemory } from './helpers/mcp.js';
import { runCliBatch } from './helpers/cli-batch.js';
import type { CliOutcome } from './helpers/processes.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const SERVER = fixturePath('probe', 'faulty-server.mjs');

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliPath, ...args],
      { env: { ...process.env, ...env }, timeout: HANG_GUARD_MS, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Command lines that need main() and not a process each (helpers/cli-batch.ts), in one process. */
function batch(lines: string[][]): Promise<CliOutcome[]> {
  return runCliBatch(lines.map((args) => ({ args })));
}

test('dogfood: faultline probe reports no failure on faultline over stdio', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'probe-'));
  try {
    const r = await cli([
      'probe',
      '--cases',
      '4',
      '--json',
      join(dir, 'r.json'),
      '--',
      process.execPath,
      cliPath,
      'mcp',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^PASS probe/);
    const record = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8'));
    assert.equal(record.format, 'faultline-run-record');
    assert.equal(record.summary.failed, 0);
    assert.ok(record.summary.passed >= 15, `only ${record.summary.passed} leaves passed`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('dogfood: faultline probe reports no failure on faultline over HTTP with a token', async () => {
  const child = spawn(
    process.execPath,
    [cliPath, 'mcp', '--transport', 'http', '--port', '0', '--token', 'dogfood-token'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      // A hang guard, not a figure: a start on a loaded machine has taken over 20 s.
      const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), HANG_GUARD_MS);
      child.stderr!.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    // Without the token: the error says so, not that the server went away.
    const refused = await cli(['probe', '--quiet', '--url', url]);
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /could not initialize the server: it answered HTTP 401 \(a token is needed/);
    const r = await cli(['probe', '--cases', '4', '--quiet', '--url', url], { FAULTLINE_PROBE_TOKEN: 'dogfood-token' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    // The HTTP checks ran and passed: faultline refuses a missing token, a foreign Origin and Host.
    for (const leaf of [
      'FAULT-SECURITY-HTTP-TOKEN',
      'FAULT-SECURITY-HTTP-ORIGIN',
      'FAULT-SECURITY-HTTP-HOST',
      'FAULT-STATE-STALE-SESSION',
    ]) {
      assert.match(r.stdout, new RegExp(`PASS ${leaf}`));
    }
  } finally {
    child.kill('SIGTERM');
  }
});

test('a faulty server: exit 1, the finding and its exchange in --json', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'probe-'));
  try {
    const r = await cli(
      ['probe', '--family', 'SCHEMA', '--json', join(dir, 'r.json'), '--', process.execPath, SERVER],
      { FAULTS: 'bad-structured' },
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /FAIL FAULT-SCHEMA-OUTPUT-MISMATCH/);
    const record = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8'));
    const leaf = record.leaves.find((l: { id: string }) => l.id === 'FAULT-SCHEMA-OUTPUT-MISMATCH');
    assert.equal(leaf.status, 'failed');
    assert.ok(
      leaf.findings[0].exchange.some(
        (x: { dir: string; text: string }) => x.dir === '<' && x.text.includes('structuredContent'),
      ),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('bad arguments: exit 2, one line on stderr, nothing on stdout', async () => {
  const lines = [
    ['probe'],
    ['probe', '--url', 'http://127.0.0.1:1/mcp', '--', 'node'],
    ['probe', '--family', 'NOPE', '--', 'node'],
    ['probe', '--cases', '1000', '--', 'node'],
    ['coverage'],
    ['coverage', '--threshold', '120', 'x.yaml'],
  ];
  const outcomes = await batch(lines);
  for (const args of lines) {
    const r = outcomes.shift()!;
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('coverage: a suite that exercises some families and not others; exit 6 below the threshold', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'coverage-'));
  try {
    // A real probe run limited to PROTO and SCHEMA, plus a tool-call chaos record that injected
    // schema_drift and latency, plus a run that never ran.
    const probe = await cli([
      'probe',
      '--family',
      'PROTO',
      '--family',
      'SCHEMA',
      '--json',
      join(dir, 'probe.json'),
      '--',
      process.execPath,
      SERVER,
    ]);
    assert.equal(probe.code, 0, probe.stdout + probe.stderr);
    await writeFile(
      join(dir, 'plan.json'),
      JSON.stringify({
        format: 'faultline-run-record',
        version: 1,
        kind: 'toolcall',
        name: 'plan',
        startedAt: new Date().toISOString(),
        injected: ['schema_drift', 'latency'],
      }),
    );
    await writeFile(
      join(dir, 'suite.yaml'),
      'version: 1\nname: demo\nruns:\n  - { name: probe, kind: probe, ' +
        'record: probe.json }\n  - { name: plan, kind: toolcall, record: ' +
        'plan.json }\n  - { name: never, kind: network, record: ' +
        'missing.json }\n',
    );
    const suite = join(dir, 'suite.yaml');
    const [r, below, met, only, unknown, taxonomy] = await batch([
      ['coverage', suite, '--format', 'json'],
      ['coverage', suite, '--threshold', '50'],
      ['coverage', suite, '--threshold', '40', '--format', 'junit'],
      ['coverage', suite, '--probe', 'plan', '--format', 'sarif'],
      ['coverage', suite, '--probe', 'nope'],
      ['coverage', '--no-suite'],
    ]);
    assert.equal(r!.code, 0, r!.stderr);
    const report = JSON.parse(r!.stdout);
    const fam = Object.fromEntries(report.families.map((f: { id: string; status: string }) => [f.id, f.status]));
    assert.equal(fam.PROTO, 'covered');
    assert.equal(fam.SCHEMA, 'covered');
    assert.equal(fam.TOOL, 'partial'); // latency → FAULT-TOOL-HANG only
    assert.equal(fam.TIMEOUT, 'partial'); // latency → FAULT-TIMEOUT-PROGRESS
    assert.equal(fam.SECURITY, 'uncovered');
    assert.equal(fam.PROVIDER, 'n/a'); // no agents in the suite
    // 7 PROTO + 3 SCHEMA + TOOL-HANG + TIMEOUT-PROGRESS exercised, out of 30 leaves minus 4 PROVIDER.
    assert.equal(report.exercised, 12);
    assert.equal(report.applicable, 26);
    assert.equal(report.percent, 46.2);
    assert.equal(report.failed, 0);
    assert.equal(report.runs.find((x: { name: string }) => x.name === 'never').ran, false);

    assert.equal(below!.code, 6);
    assert.match(below!.stdout, /46\.2% .*NOT met/);
    assert.equal(met!.code, 0);
    assert.match(met!.stdout, /<testsuite name="fault-coverage" tests="8" failures="5" skipped="1">/);
    const sarif = JSON.parse(only!.stdout);
    assert.equal(sarif.version, '2.1.0');
    assert.equal(sarif.runs[0].results.length, 26 - 3); // plan alone exercises 3 leaves
    assert.equal(unknown!.code, 2);
    assert.match(taxonomy!.stdout, /8 families, 30 leaves/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test(
  'coverage: failed leaves are counted apart from exercised ones, ' + 'in the headline, the family lines and the JSON',
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'coverage-failed-'));
    try {
      // A real probe of a server that crashes on bad arguments and serves tools/list before initialize.
      const probe = await cli(
        [
          'probe',
          '--family',
          'PROTO',
          '--family',
          'TOOL',
          '--cases',
          '12',
          '--json',
          join(dir, 'probe.json'),
          '--',
          process.execPath,
          SERVER,
        ],
        { FAULTS: 'crash,pre-init' },
      );
      assert.equal(probe.code, 1, probe.stdout + probe.stderr);
      await writeFile(
        join(dir, 'suite.yaml'),
        'version: 1\nname: crashy\nruns:\n  - { name: probe, kind: probe, record: probe.json }\n',
      );
      const suite = join(dir, 'suite.yaml');
      const [text, jsonRun, sarifRun] = (await batch([
        ['coverage', suite],
        ['coverage', suite, '--format', 'json'],
        ['coverage', suite, '--format', 'sarif'],
      ])) as [CliOutcome, CliOutcome, CliOutcome];
      assert.equal(text.code, 0, text.stderr);
      // mcptest's family line and summary shapes; the failing leaf named on its family's line.
      assert.match(text.stdout, /^covered {2}Tool invocation {2}4\/4 faults \[TOOL\] {2}1 failing: FAULT-TOOL-CRASH$/m);
      assert.match(
        text.stdout,
        /^covered {2}Protocol interaction {2}7\/7 faults \[PROTO\]$/m,
        'a warning (PRE-INIT) is exercised, not failed',
      );
      assert.match(text.stdout, /^uncovered {2}Security validation {2}0\/5 faults \[SECURITY\]$/m);
      assert.match(text.stdout, /^2 of 7 families fully covered \(1 n\/a\); 1 exercised fault failed$/m);
      assert.match(text.stdout.split('\n')[0]!, /42\.3% of applicable faults exercised \(11\/26\), 1 of them failed/);
      assert.match(text.stdout, /failed:\n {2}FAULT-TOOL-CRASH — failed in probe/);
      const json = JSON.parse(jsonRun.stdout);
      assert.equal(json.failed, 1);
      assert.equal(json.families.find((f: { id: string }) => f.id === 'TOOL').failed, 1);
      assert.deepEqual([json.familiesCovered, json.familiesApplicable], [2, 7]);
      assert.equal(json.leaves.find((l: { id: string }) => l.id === 'FAULT-PROTO-PRE-INIT').failed, false);
      const sarif = JSON.parse(sarifRun.stdout);
      assert.deepEqual(
        sarif.runs[0].results
          .filter((r: { level: string }) => r.level === 'error')
          .map((r: { ruleId: string }) => r.ruleId),
        ['FAULT-TOOL-CRASH'],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test(
  'coverage --no-suite --probe NAME scores those probes against the ' + 'taxonomy, and --threshold gates it (exit 6)',
  async () => {
    const [scored, gated, atFifteen, nothingNamed, unknown] = (await batch([
      ['coverage', '--no-suite', '--probe', 'fuzz', '--probe', 'proto-ping', '--format', 'json'],
      ['coverage', '--no-suite', '--probe', 'fuzz', '--threshold', '100'],
      ['coverage', '--no-suite', '--probe', 'fuzz', '--threshold', '15'],
      ['coverage', '--no-suite', '--threshold', '1'],
      ['coverage', '--no-suite', '--probe', 'nope'],
    ])) as [CliOutcome, CliOutcome, CliOutcome, CliOutcome, CliOutcome];
    assert.equal(scored.code, 0, scored.stderr);
    const report = JSON.parse(scored.stdout);
    assert.deepEqual(report.probes, ['tool-hostile-args', 'proto-ping']); // mcptest's fuzz is our hostile-argument probe
    const exercised = report.leaves
      .filter((l: { exercised: boolean }) => l.exercised)
      .map((l: { id: string }) => l.id)
      .sort();
    assert.deepEqual(exercised, [
      'FAULT-PROTO-PING',
      'FAULT-TOOL-CRASH',
      'FAULT-TOOL-HANG',
      'FAULT-TOOL-PROTOCOL-ERROR',
      'FAULT-TOOL-STDOUT-POLLUTION',
    ]);
    assert.equal(report.families.find((f: { id: string }) => f.id === 'PROVIDER').status, 'n/a');
    assert.equal(gated.code, 6);
    assert.match(
      gated.stdout,
      /^fault coverage of probe tool-hostile-args: 15\.4% of applicable faults exercised \(4\/26\) \(threshold 100%: NOT met\)/,
    );
    assert.match(gated.stdout, /^covered {2}Tool invocation {2}4\/4 faults \[TOOL\]$/m);
    assert.match(gated.stdout, /^1 of 7 families fully covered \(1 n\/a\)$/m);
    assert.equal(atFifteen.code, 0);
    // A threshold with nothing named scores nothing: below any threshold above 0.
    assert.equal(nothingNamed.code, 6);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--probe: no probe named nope \(accepted: .*fuzz.*tool-hostile-args/);
  },
);

test('fault_probe_mcp_server: the report and every finding; bad arguments are named', async () => {
  const { client, close } = await connectInMemory(commandsAllowed());
  try {
    const result = await client.callTool({
      name: 'fault_probe_mcp_server',
      arguments: { command: process.execPath, args: [SERVER], families: ['PROTO'] },
    });
    assert.equal(result.isError, undefined);
    const s = result.structuredContent as { verdict: string; passed: number; failed: number; leaves: unknown[] };
    assert.equal(s.verdict, 'pass');
    assert.equal(s.passed, 7);
    const both = await client.callTool({
      name: 'fault_probe_mcp_server',
      arguments: { command: 'node', url: 'http://127.0.0.1:1/mcp' },
    });
    assert.equal(both.isError, true);
    const remote = await client.callTool({
      name: 'fault_probe_mcp_server',
      arguments: { url: 'http://203.0.113.9/mcp' },
    });
    assert.equal(remote.isError, true);
    assert.match(JSON.stringify(remote.content), /url/);
    // A command that does not exist is a wrong argument, not a server that failed a probe.
    const missing = await client.callTool({
      name: 'fault_probe_mcp_server',
      arguments: { command: '/nonexistent/faultline-no-such-server' },
    });
    assert.equal(missing.isError, true);
    assert.match(
      JSON.stringify(missing.content),
      /command: could not start '\/nonexistent\/faultline-no-such-server'.*ENOENT/,
    );
  } finally {
    await close();
  }
});

test('the stdout guard is for the stdio server only, not for a command after --', async () => {
  const { isStdioServerInvocation } = await import('../src/transports/stdout-guard.js');
  assert.equal(isStdioServerInvocation(['node', 'cli', 'mcp']), true);
  assert.equal(isStdioServerInvocation(['node', 'cli', 'probe', '--', 'node', 'cli.js', 'mcp']), false);
  assert.equal(isStdioServerInvocation(['node', 'cli', 'mcp', '--transport', 'http']), false);
});

test('faultline over stdio refuses a request before initialize, and still serves ping', async () => {
  const child = spawn(process.execPath, [cliPath, 'mcp'], { stdio: ['pipe', 'pipe', 'ignore'] });
  try {
    const lines: string[] = [];
    child.stdout!.on('data', (c: Buffer) => lines.push(...c.toString().split('\n').filter(Boolean)));
    child.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) + '\n');
    child.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) + '\n');
    const deadline = Date.now() + HANG_GUARD_MS;
    while (lines.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const byId: Record<string, { error?: { code: number }; result?: unknown }> = Object.fromEntries(
      lines
        .map((l) => JSON.parse(l) as { id: number; error?: { code: number }; result?: unknown })
        .map((m) => [m.id, m]),
    );
    assert.equal(byId[1]?.error?.code, -32600);
    assert.deepEqual(byId[2]?.result, {});
  } finally {
    child.kill('SIGKILL');
  }
});
