/**
 * `faultline run --json FILE` writes a run record (kind scenario) that `faultline coverage` reads:
 * real scenario runs against a real HTTP server on loopback, then coverage over a suite naming
 * their records. A fault counts as injected only when the proxy's counters say it acted: a
 * latency fault on a mapping no request crossed injected nothing, and its leaves stay uncovered.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliPath } from './helpers/repo.js';
import { runCliProcess, type CliOutcome } from './helpers/processes.js';
import { runCliBatch } from './helpers/cli-batch.js';

let work: string;
let server: Server;
let url: string;
let port: number;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'faultline-record-'));
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}/`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(work, { recursive: true, force: true });
});

function cli(args: string[]): Promise<CliOutcome> {
  return runCliProcess(args, { FAULTLINE_DATA_DIR: join(work, 'data') });
}

interface Record {
  format: string;
  version: number;
  kind: string;
  name: string;
  startedAt: string;
  injected: string[];
  verdict: string;
  verdicts: Array<{ slo: string; status: string }>;
  run: { load: { requests: number } };
}

test(
  'run --json: a scenario run record lists the faults that acted, ' + 'and coverage counts their leaves only',
  async () => {
    const acted = join(work, 'latency.json');
    const first = await cli([
      'run',
      'latency',
      '--url',
      url,
      '--latency',
      '20',
      '--duration',
      '1s',
      '--num-clients',
      '2',
      '--rps',
      '5',
      '--slo',
      '99% @ 5000ms',
      '--json',
      acted,
    ]);
    assert.equal(first.code, 0, first.stderr);
    const record = JSON.parse(readFileSync(acted, 'utf8')) as Record;
    assert.equal(record.format, 'faultline-run-record');
    assert.equal(record.version, 1);
    assert.equal(record.kind, 'scenario');
    assert.equal(record.name, `latency scenario ${url}`);
    assert.ok(!Number.isNaN(Date.parse(record.startedAt)));
    assert.deepEqual(record.injected, ['latency']);
    assert.equal(record.verdict, 'passed');
    assert.deepEqual(record.verdicts, [{ slo: '99% @ 5000ms', status: 'passed' }]);
    assert.equal(record.run.load.requests, 10, 'every number of the run is still there');

    // A blackhole on a mapping the load never crosses (the load goes straight to --url): configured,
    // but no request passed through it. Inconclusive, and nothing injected.
    const idle = join(work, 'blackhole.json');
    // (SLOs a busy machine cannot fail: a failed SLO would decide the verdict.)
    const second = await cli([
      'run',
      'blackhole',
      '--url',
      url,
      '--proxy',
      `0=127.0.0.1:${port}`,
      '--duration',
      '500ms',
      '--num-clients',
      '1',
      '--rps',
      '4',
      '--slo',
      '99% @ 5000ms',
      '--json',
      idle,
    ]);
    assert.equal(second.code, 4, second.stderr);
    const idleRecord = JSON.parse(readFileSync(idle, 'utf8')) as Record;
    assert.equal(idleRecord.kind, 'scenario');
    assert.deepEqual(idleRecord.injected, []);
    assert.equal(idleRecord.verdict, 'inconclusive');

    writeFileSync(
      join(work, 'suite.yaml'),
      'version: 1\nname: scenarios\nruns:\n  - { name: slow-db, kind: ' +
        'scenario, record: latency.json }\n  - { name: dead-db, kind: ' +
        'scenario, record: blackhole.json }\n',
    );
    const coverage = await cli(['coverage', join(work, 'suite.yaml'), '--format', 'json']);
    assert.equal(coverage.code, 0, coverage.stderr);
    const report = JSON.parse(coverage.stdout) as {
      runs: Array<{ name: string; ran: boolean; problem?: string }>;
      leaves: Array<{ id: string; exercised: boolean; by: Array<{ run: string; status: string }> }>;
      exercised: number;
    };
    assert.deepEqual(
      report.runs.map((run) => [run.name, run.ran, run.problem]),
      [
        ['slow-db', true, undefined],
        ['dead-db', true, undefined],
      ],
    );
    const exercised = report.leaves.filter((leaf) => leaf.exercised);
    // The taxonomy maps a network latency to these two; the idle blackhole would have added
    // FAULT-TIMEOUT-CANCEL-IGNORED, had it acted.
    assert.deepEqual(exercised.map((leaf) => leaf.id).sort(), ['FAULT-TIMEOUT-PROGRESS', 'FAULT-TOOL-HANG']);
    for (const leaf of exercised) assert.deepEqual(leaf.by, [{ run: 'slow-db', status: 'injected latency' }]);
    assert.equal(report.exercised, 2);
  },
);

test('run --json: a record path that cannot be written is refused before the run (exit 2 naming --json)', async () => {
  const bad = await cli([
    'run',
    'latency',
    '--url',
    url,
    '--duration',
    '10s',
    '--json',
    join(work, 'no-such-dir', 'record.json'),
  ]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.equal(bad.stdout, '');
  assert.match(bad.stderr, /^faultline: --json /);
});

test(
  'proxy --json: on Ctrl-C, a network run record lists the faults ' +
    'that acted (an HTTP fault no path matched did not)',
  async () => {
    const recordPath = join(work, 'network.json');
    const child = spawn(
      process.execPath,
      [
        cliPath,
        'proxy',
        '--proxy',
        `0=127.0.0.1:${port}`,
        '--latency',
        '20',
        '--http-fault',
        '{"type":"error","path":"/never/**"}',
        '--seed',
        '1',
        '--json',
        recordPath,
      ],
      { env: { ...process.env, NODE_ENV: '', ENVIRONMENT: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const listening = new Promise<number>((resolve) =>
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const match = /listening on 127\.0\.0\.1:(\d+)/.exec(stderr);
        if (match) resolve(Number(match[1]));
      }),
    );
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    try {
      const proxyPort = await Promise.race([listening, closed.then(() => assert.fail(`the proxy exited: ${stderr}`))]);
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`http://127.0.0.1:${proxyPort}/ok`, { headers: { connection: 'close' } });
        assert.equal(response.status, 200);
        await response.text();
      }
      child.kill('SIGINT');
      assert.equal(await closed, 0, stderr);
    } finally {
      clearTimeout(guard);
    }
    assert.ok(JSON.parse(stdout).faults.length === 1, 'the counters still go to stdout');
    const record = JSON.parse(readFileSync(recordPath, 'utf8')) as {
      format: string;
      kind: string;
      injected: string[];
      counters: { httpFaults: Array<{ requests: number; applications: number }> };
    };
    assert.equal(record.format, 'faultline-run-record');
    assert.equal(record.kind, 'network');
    assert.deepEqual(record.injected, ['latency']);
    assert.equal(record.counters.httpFaults[0]?.applications, 0);

    writeFileSync(
      join(work, 'network-suite.yaml'),
      'version: 1\nname: net\nruns:\n  - { name: proxied, kind: network, record: network.json }\n',
    );
    // Coverage of the record, and a record path that cannot be written: main() in one child (helpers/cli-batch.ts;
    // a process start costs ~0.4 s of CPU), the proxy refused before it starts.
    const [coverage, refused] = await runCliBatch(
      [
        ['coverage', join(work, 'network-suite.yaml'), '--format', 'json'],
        ['proxy', '--proxy', `0=127.0.0.1:${port}`, '--json', join(work, 'no-such-dir', 'r.json')],
      ].map((args) => ({ args, env: { FAULTLINE_DATA_DIR: join(work, 'data') } })),
    );
    assert.equal(coverage!.code, 0, coverage!.stderr);
    const report = JSON.parse(coverage!.stdout) as { leaves: Array<{ id: string; exercised: boolean }> };
    assert.deepEqual(
      report.leaves
        .filter((leaf) => leaf.exercised)
        .map((leaf) => leaf.id)
        .sort(),
      ['FAULT-TIMEOUT-PROGRESS', 'FAULT-TOOL-HANG'],
    );

    assert.equal(refused!.code, 2, refused!.stderr);
    assert.match(refused!.stderr, /^faultline: --json /);
  },
);

test(
  'faultsThatActed: applications alone are not enough when nothing ' + 'changed (0 ms delays, no segment lost)',
  async () => {
    const { faultsThatActed } = await import('../src/proxy/run-record.js');
    const { emptyCounters } = await import('../src/proxy/faults/fault.js');
    const counters = (type: string, fields: Partial<ReturnType<typeof emptyCounters>>) => ({
      ...emptyCounters(type, type),
      active: false,
      ...fields,
    });
    const http = (type: string, applications: number) => ({
      name: type,
      type,
      target: null,
      active: true,
      requests: 5,
      applications,
      passes: 5 - applications,
      oversized: 0,
    });
    assert.deepEqual(
      faultsThatActed({
        mappings: [],
        faults: [
          counters('latency', { applications: 9, delayAddedMs: 0 }),
          counters('jitter', { applications: 3, delayAddedMs: 12 }),
          counters('packet_loss', { applications: 0, segments: 40, segmentsLost: 0 }),
          counters('bandwidth', { applications: 0, bytesUpstream: 100 }),
          counters('blackhole', { applications: 1 }),
        ],
        httpFaults: [http('error', 0), http('rate_limit', 2)] as never,
      }),
      ['blackhole', 'http_rate_limit', 'jitter'],
    );
  },
);
