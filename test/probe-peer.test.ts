/**
 * Everything the probe reads from a server is bounded, and what cannot be read is reported as what
 * it is: against real servers that answer their first tool call with a 25 MB line, invalid JSON,
 * a result nested 6,000 levels, a 50 MB HTTP body or an SSE stream that never ends
 * (test/fixtures/probe/hostile-output-server.mjs). Also: the bounded line reader itself, and
 * excerpts that show only their own call's lines.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliPath, fixturePath } from './helpers/repo.js';
import { startFixtureServer } from './helpers/fixture-server.js';
import { describeOversize, LineSplitter, type OversizeLine } from '../src/jsonrpc/ndjson.js';
import { loadTaxonomy, runProbe, type ProbeReport, type Target } from '../src/probe/index.js';
import { handshake, openPeer } from '../src/probe/peer/index.js';
import { ProgramPolicy } from '../src/consent/index.js';

const HOSTILE = fixturePath('probe', 'hostile-output-server.mjs');
const FAULTY = fixturePath('probe', 'faulty-server.mjs');
const UNREADABLE = 'FAULT-PROTO-UNREADABLE-MESSAGE';

test('the line reader: lines across chunks, CRLF, and a line over the bound counted and dropped, not held', () => {
  const lines: string[] = [];
  const oversize: OversizeLine[] = [];
  const reader = new LineSplitter({
    maxBytes: 16,
    onLine: (l) => lines.push(l),
    ...describeOversize((o) => oversize.push(o)),
  });
  reader.feed(Buffer.from('{"a":1}\r\n{"b"'));
  reader.feed(Buffer.from(':2}\nstart-'));
  reader.feed(Buffer.from('x'.repeat(1000)));
  reader.feed(Buffer.from('-end\nshort\n'));
  reader.feed(Buffer.from('tail'));
  reader.end();
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', 'short', 'tail']);
  assert.equal(oversize.length, 1);
  assert.equal(oversize[0]!.bytes, 'start-'.length + 1000 + '-end'.length);
  assert.match(oversize[0]!.head, /^start-x+$/);
  assert.match(oversize[0]!.tail, /x-end$/);
});

/** A per-call bound far above what reaching a size bound takes on a busy machine: the bound on size decides, not time.
 * */
async function probe(
  target: Target,
  families: Array<'PROTO' | 'TOOL' | 'SCHEMA'> = ['PROTO', 'TOOL'],
): Promise<ProbeReport> {
  return runProbe(target, await loadTaxonomy(), {
    programs: ProgramPolicy.owner(),
    cases: 1,
    seed: 1,
    families,
    allowWrites: false,
    callTimeoutMs: 45_000,
    overallTimeoutMs: 120_000,
  });
}

const stdio = (env: Record<string, string>): Target => ({
  kind: 'stdio',
  command: process.execPath,
  args: [HOSTILE],
  env,
});

const httpServer = (env: Record<string, string>): ReturnType<typeof startFixtureServer> =>
  startFixtureServer(HOSTILE, env);

const leaf = (report: ProbeReport, id: string) => report.leaves.find((l) => l.id === id)!;
const messages = (report: ProbeReport): string =>
  report.leaves.flatMap((l) => l.findings.map((f) => `${f.leaf} ${f.severity}: ${f.message}`)).join('\n');

/** What every bounded case shares: the answer is an unreadable-message finding, never a hang or a crash. */
function assertUnreadable(report: ProbeReport, severity: 'failure' | 'warning', problem: RegExp): void {
  assert.equal(report.error, undefined, report.error);
  const unreadable = leaf(report, UNREADABLE);
  assert.equal(unreadable.status, severity === 'failure' ? 'failed' : 'warning', messages(report));
  assert.equal(unreadable.findings[0]!.severity, severity);
  assert.match(unreadable.findings[0]!.message, problem);
  // The call was answered, unreadably: not "no answer", not a crash.
  assert.equal(leaf(report, 'FAULT-TOOL-HANG').status, 'passed', messages(report));
  assert.equal(leaf(report, 'FAULT-TOOL-CRASH').status, 'passed', messages(report));
  assert.doesNotMatch(messages(report), /no answer/);
}

test('stdio: invalid JSON from the server is reported as invalid JSON (a failure), not as no answer', async () => {
  assertUnreadable(await probe(stdio({ MODE: 'invalid' })), 'failure', /not valid JSON-RPC: invalid JSON/);
});

test('stdio: a result nested 6,000 levels is refused before parsing (a warning), and the probe goes on', async () => {
  assertUnreadable(await probe(stdio({ MODE: 'deep', DEPTH: '6000' })), 'warning', /nested deeper than 512 levels/);
});

test(
  'stdio: a 25 MB line is a finding, not a memory spike: the probe ' + "process stays far below the line's cost",
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'probe-line-'));
    try {
      const rssProbe = fileURLToPath(new URL('../bench/peak-rss-probe.js', import.meta.url));
      const args = [
        '--import',
        rssProbe,
        cliPath,
        'probe',
        '--quiet',
        '--family',
        'PROTO',
        '--family',
        'TOOL',
        '--cases',
        '1',
        '--call-timeout',
        '45000',
        '--json',
        join(dir, 'r.json'),
        '--',
        process.execPath,
        HOSTILE,
      ];
      const stderr = await new Promise<string>((resolve) => {
        const child = spawn(process.execPath, args, {
          env: { ...process.env, MODE: 'big', SIZE_MB: '25' },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let err = '';
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.on('close', () => resolve(err));
      });
      const report = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8')) as ProbeReport;
      assertUnreadable(report, 'warning', /a line of 25\.0 MiB, over the probe's bound of 16 MiB per message/);
      // Memory is not time: a wide bound. The old reader peaked at 300-430 MB on this line.
      const peakMb = Number(/faultline-peak-rss-kb=(\d+)/.exec(stderr)?.[1]) / 1024;
      assert.ok(peakMb < 200, `peak RSS ${peakMb.toFixed(0)} MB`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

for (const [mode, severity, problem] of [
  ['invalid', 'failure', /invalid JSON/],
  ['deep', 'warning', /nested deeper than 512 levels/],
  ['big', 'warning', /a body of more than 16 MiB, the probe's bound per message/],
] as const) {
  test(
    `HTTP: ${mode === 'big' ? 'a 50 MB body' : mode === 'deep' ? 'a 6,000-level result' : 'invalid JSON'} ` +
      `is cut or refused and reported as such`,
    async () => {
      const { url, child } = await httpServer({ MODE: mode, SIZE_MB: '50' });
      try {
        assertUnreadable(await probe({ kind: 'http', url }), severity, problem);
      } finally {
        child.kill('SIGKILL');
      }
    },
  );
}

test('HTTP: an SSE stream that never ends is cut at the bound per answer', async () => {
  const { url, child } = await httpServer({ MODE: 'flood' });
  try {
    const report = await probe({ kind: 'http', url });
    const unreadable = leaf(report, UNREADABLE);
    assert.equal(unreadable.status, 'warning', messages(report));
    assert.match(unreadable.findings[0]!.message, /an answer of more than 64 MiB, the probe's bound per answer/);
  } finally {
    child.kill('SIGKILL');
  }
});

test("an excerpt holds only its own request's lines, while another request answers in between", async () => {
  const peer = openPeer(
    { kind: 'stdio', command: process.execPath, args: [FAULTY], env: { FAULTS: 'slow' } },
    {
      programs: ProgramPolicy.owner(),
    },
  );
  try {
    assert.ok((await handshake(peer, 10_000)).message?.result);
    const from = peer.transcript.length;
    // slow_read answers after 600 ms; two pings are asked and answered meanwhile.
    const slow = peer.request('tools/call', { name: 'slow_read', arguments: {} }, 10_000, { id: 'slow' });
    const pings = await Promise.all([
      peer.request('ping', {}, 10_000, { id: 'p1' }),
      peer.request('ping', {}, 10_000, { id: 'p2' }),
    ]);
    assert.ok((await slow).message?.result);
    assert.ok(pings.every((p) => p.message?.result));
    const excerpt = peer.excerpt(from, 'slow').map((line) => line.text);
    assert.equal(excerpt.length, 2, excerpt.join('\n'));
    assert.ok(excerpt.every((text) => text.includes('"slow"')));
    assert.deepEqual(
      peer.excerpt(from, 'p1').map((line) => JSON.parse(line.text).id),
      ['p1', 'p1'],
    );
  } finally {
    await peer.close();
  }
});
