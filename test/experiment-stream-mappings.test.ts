/**
 * A mapping whose scheme says it carries no HTTP (tcp://, redis://), from the outside trial on
 * PostgreSQL (issue 39 items 5 and 7): a request fault it cannot carry is refused when the file is
 * read — `validate` and `run` alike, with its line — instead of `run` spending its load to end
 * inconclusive; every export keeps the protocol (a connection_refused on tcp:// is no HTTPChaos,
 * and FIS does not call it an HTTP fault); the run record names a fault as what ran on the stream.
 * Real files through the built CLI, a real TCP server and a real HTTP app in front of it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse } from 'yaml';
import { runCliProcess, type CliOutcome } from './helpers/processes.js';
import { runCliBatch } from './helpers/cli-batch.js';
import { freePort } from '../src/proxy/ephemeral-ports.js';

const work = mkdtempSync(join(tmpdir(), 'faultline-stream-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** The trial's file, its database mapping and the database step as given. */
function trialFile(name: string, mapping: string, fault: string): string {
  const file = join(work, name);
  writeFileSync(
    file,
    [
      'title: shop survives a slow cache and a dead database',
      'load: {url: http://127.0.0.1:8100/item, rps: 20, duration: 24s, timeout: 2s}',
      'proxies:',
      '  - "21211=127.0.0.1:11211#cache"',
      `  - "${mapping}"`,
      'steady_state: ["p95 < 200ms", "errors < 1%"]',
      'method:',
      '  - {name: cache slow, at: 4s, for: 5s, fault: {target: cache, type: latency, latencyMs: 250}}',
      `  - {name: db refused, at: 11s, for: 5s, fault: {target: db, ${fault}}}`,
      'expect: ["errors < 1%"]',
      'recover_within: 3s',
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * The command lines of every test below that reads, refuses or exports a file, through main() in
 * one process (helpers/cli-batch.ts), run once when the first of them asks: they need no process
 * each, nor one per test (a process start costs ~0.5 s of CPU). The run of a file is the tests after.
 */
const lines: string[][] = [];
let outcomes: Promise<CliOutcome[]> | undefined;

/** Adds a test's command lines (when its describe is defined); the function gives their outcomes, in order. */
function cli(own: string[][]): () => Promise<[CliOutcome, CliOutcome, CliOutcome, ...CliOutcome[]]> {
  const from = lines.length;
  lines.push(...own);
  return async () => {
    outcomes ??= runCliBatch(lines.map((args) => ({ args })));
    return (await outcomes).slice(from, from + own.length) as [CliOutcome, CliOutcome, CliOutcome];
  };
}

describe('validate refuses what run would refuse', () => {
  for (const [fault, kebab] of [
    ['type: rate_limit', 'rate-limit'],
    ['type: error, statusCode: 503', 'error'],
  ] as const) {
    const file = trialFile(`tcp-${kebab}.yaml`, '25432=tcp://127.0.0.1:5432#db', fault);
    const outcomes = cli([
      ['experiment', 'validate', file],
      ['experiment', 'run', file],
    ]);
    test(`${kebab} on a tcp:// mapping: refused with its line by validate and run, said once`, async () => {
      const [validate, run] = await outcomes();
      assert.equal(validate.code, 2, validate.stderr);
      const reason = new RegExp(
        `method\\[1\\]\\.fault: cannot act on its mapping "25432=tcp://127\\.0\\.0\\.1:5432#db": ${kebab} ` +
          'has no meaning in an opaque TCP stream.*\\(\\S+ line 9, column \\d+\\)',
      );
      assert.match(validate.stderr, reason);
      // run reads the same file the same way: refused before any proxy or load starts.
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, reason);
      assert.equal(run.stderr.split('cannot act on its mapping').length - 1, 1, run.stderr);
      assert.doesNotMatch(run.stdout + run.stderr, /INCONCLUSIVE|Verdict/i);
    });
  }

  const carried = [
    ['25432=tcp://127.0.0.1:5432#db', 'type: connection_refused'],
    ['25432=tcp://127.0.0.1:5432#db', 'type: latency, delay: 100'],
    ['25432=127.0.0.1:5432#db', 'type: rate_limit'],
  ] as const;
  const validated = cli([
    ...carried.map(([mapping, fault], i) => ['experiment', 'validate', trialFile(`ok-${i}.yaml`, mapping, fault)]),
    ['experiment', 'validate', trialFile('redis.yaml', '26379=redis://127.0.0.1:6379#db', 'type: rate_limit')],
  ]);
  test('a fault the stream can carry validates; so does any fault on a mapping without a scheme', async () => {
    const outcomes = await validated();
    for (const [i, [mapping, fault]] of carried.entries())
      assert.equal(outcomes[i]!.code, 0, `${mapping} ${fault}: ${outcomes[i]!.stderr}`);
    const redis = outcomes[carried.length]!;
    assert.equal(redis.code, 2);
    assert.match(redis.stderr, /method\[1\]\.fault: cannot act on its mapping .*Redis \(RESP\).*\(\S+ line 9/);
  });
});

describe('exports keep the protocol of a tcp:// mapping', () => {
  const refused = trialFile('refused.yaml', '25432=tcp://127.0.0.1:5432#db', 'type: connection_refused');
  const refusedExports = cli([
    ['experiment', 'export', '--to', 'chaos-mesh', '--partial', refused],
    ['experiment', 'export', '--to', 'chaos-mesh', refused],
    ['experiment', 'export', '--to', 'fis', '--partial', refused],
  ]);
  test('connection_refused: no HTTPChaos on port 5432; left out with the reason, by chaos-mesh and fis', async () => {
    const [mesh, strict, fis] = await refusedExports();
    assert.equal(mesh.code, 0, mesh.stderr);
    const workflow = parse(mesh.stdout) as { spec: { templates: Array<Record<string, unknown>> } };
    const kinds = workflow.spec.templates.map((template) => template.templateType);
    assert.ok(!kinds.includes('HTTPChaos'), kinds.join(', '));
    assert.equal(kinds.filter((kind) => kind === 'NetworkChaos').length, 1, 'the cache latency only');
    assert.match(
      mesh.stderr,
      /left out: method\[1\] \(db refused\): connection_refused on a tcp:\/\/ mapping \(an opaque stream\) resets the connection/,
    );
    assert.notEqual(strict.code, 0, 'without --partial, a step left out fails the export');
    assert.equal(fis.code, 0, fis.stderr);
    assert.match(fis.stderr, /left out: method\[1\] \(db refused\): connection_refused on a tcp:\/\/ mapping/);
    assert.doesNotMatch(fis.stderr, /HTTP fault/);
  });

  const slow = trialFile('slow.yaml', '25432=tcp://127.0.0.1:5432#db', 'type: latency, delay: 80');
  const bare = trialFile('bare.yaml', '25432=127.0.0.1:5432#db', 'type: connection_refused');
  const slowExports = cli([
    ['experiment', 'export', '--to', 'chaos-mesh', slow],
    ['experiment', 'export', '--to', 'fis', slow],
    ['experiment', 'export', '--to', 'chaos-mesh', bare],
  ]);
  test('latency on tcp:// is the network delay on both engines; a mapping without a scheme says so', async () => {
    const [mesh, fis, guessed] = await slowExports();
    assert.equal(mesh.code, 0, mesh.stderr);
    const templates = (parse(mesh.stdout) as { spec: { templates: Array<Record<string, unknown>> } }).spec.templates;
    const step = templates.find((template) => template.name === 'step-2')!;
    assert.equal(step.templateType, 'NetworkChaos');
    assert.deepEqual((step.networkChaos as Record<string, unknown>).delay, {
      latency: '80ms',
      jitter: '0ms',
      correlation: '0',
    });
    assert.equal(fis.code, 0, fis.stderr);
    const actions = (JSON.parse(fis.stdout) as { actions: Record<string, { actionId: string; parameters: object }> })
      .actions;
    assert.equal(actions['step-2']!.actionId, 'aws:ecs:task-network-latency');
    assert.equal((actions['step-2']!.parameters as Record<string, string>).delayMilliseconds, '80');

    assert.equal(guessed.code, 0, guessed.stderr);
    assert.match(guessed.stderr, /the mapping #db declares no protocol.*give its mapping tcp:\/\//);
  });
});

test('the run record names connection_refused on tcp:// as what ran: tcp_connection_refused', async () => {
  // The dependency: a TCP server answering each line; the app: one connection to it per request.
  const backend = net.createServer((socket) => socket.on('data', (data) => socket.write(data)));
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const proxyPort = await freePort();
  const app = http.createServer((_req, res) => {
    const socket = net.connect(proxyPort, '127.0.0.1', () => socket.write('ping\n'));
    socket.once('data', () => {
      socket.destroy();
      res.end('ok');
    });
    socket.once('error', () => {
      res.statusCode = 502;
      res.end('dependency failed');
    });
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  try {
    const file = join(work, 'record.yaml');
    writeFileSync(
      file,
      [
        'title: refused on a stream',
        // As short as a run with a baseline, a fault window and a recovery can be: the record is what is asked.
        `load: {url: "http://127.0.0.1:${(app.address() as AddressInfo).port}/", rps: 20, duration: 2s}`,
        `proxies: ["${proxyPort}=tcp://127.0.0.1:${(backend.address() as AddressInfo).port}#db"]`,
        'method: [{name: db refused, at: 500ms, for: 1s, fault: {target: db, type: connection_refused}}]',
        'expect: ["errors < 99%"]',
        '',
      ].join('\n'),
    );
    const record = join(work, 'record.json');
    const run = await runCliProcess(['experiment', 'run', file, '--json', record], {});
    const written = JSON.parse(readFileSync(record, 'utf8')) as { injected: string[]; verdictReasons: string[] };
    assert.deepEqual(written.injected, ['tcp_connection_refused'], `${run.stderr}\n${written.verdictReasons}`);
  } finally {
    await new Promise<void>((resolve) => app.close(() => resolve()));
    await new Promise<void>((resolve) => backend.close(() => resolve()));
  }
});

test('the preflight opens a connection and closes it without a byte: the dependency sees that, no request', async () => {
  const { tryConnect } = await import('../src/experiment/preflight.js');
  const seen: Array<{ bytes: number }> = [];
  const closed: Promise<void>[] = [];
  const dependency = net.createServer((socket) => {
    const record = { bytes: 0 };
    seen.push(record);
    socket.on('data', (data) => (record.bytes += data.length));
    closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
  });
  await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
  try {
    assert.equal(await tryConnect('127.0.0.1', (dependency.address() as AddressInfo).port, undefined), undefined);
    // The connection it saw ends; nothing was written on it.
    while (closed.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await Promise.all(closed);
    assert.deepEqual(seen, [{ bytes: 0 }]);
  } finally {
    await new Promise<void>((resolve) => dependency.close(() => resolve()));
  }
});
