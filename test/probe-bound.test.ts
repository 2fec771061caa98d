/**
 * `--timeout` (overallTimeoutMs) bounds the whole probe run, stopping the server included:
 * against servers that hang (never answer, or answer everything but tool calls) and ignore
 * SIGTERM and the end of their stdin, the run ends (never before its bound, and long before the
 * servers would let it), and neither the server nor the child it started outlives it. Over HTTP,
 * the probe's sockets to a hanging server are closed when runProbe returns. How close to the
 * bound it ends (within 1.25×) is bench/checks/probe.ts's, probe.overall-bound.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliPath, fixturePath } from './helpers/repo.js';
import { alive } from './helpers/processes.js';
import { HANG_GUARD_MS } from './helpers/wait.js';
import { loadTaxonomy, runProbe } from '../src/probe/index.js';
import { ProgramPolicy } from '../src/consent/index.js';

const HANG = fixturePath('probe', 'hang-server.mjs');

/** The pids still alive after a short settling time (an exited process may take a moment to be reaped by init). */
async function survivors(pids: number[]): Promise<number[]> {
  for (let i = 0; i < 40 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 50));
  return pids.filter(alive);
}

function probeCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliPath, 'probe', ...args],
      { env: { ...process.env, ...env }, timeout: HANG_GUARD_MS },
      (error, stdout, stderr) =>
        resolve({
          code: error ? ((error as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr,
          ms: Date.now() - started,
        }),
    );
  });
}

for (const hang of ['all', 'calls'] as const) {
  test(
    `probe --timeout bounds the whole run against a server that hangs ` +
      `(${hang === 'all' ? 'answers nothing' : 'never answers a tool call'}) ` +
      `and ignores SIGTERM`,
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'probe-bound-'));
      const pidFile = join(dir, 'pids');
      try {
        const bound = 3000;
        const r = await probeCli(
          ['--quiet', '--timeout', String(bound), '--json', join(dir, 'r.json'), '--', process.execPath, HANG],
          { HANG: hang, PIDS: pidFile },
        );
        const report = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8'));
        // The run, stopping the server included, ends at its bound: not before, and without waiting
        // on servers that never would end it (held within 1.25× by bench/checks/probe.ts).
        assert.ok(report.durationMs >= bound * 0.95, `ended early: ${report.durationMs} ms`);
        assert.ok(report.durationMs < bound * 4, `the run took ${report.durationMs} ms for a ${bound} ms bound`);
        // Nor does the process wait on them after its report (it once waited ~40 s on a grandchild).
        assert.ok(
          r.ms - report.durationMs < 15_000,
          `the process outlived its report by ${r.ms - report.durationMs} ms`,
        );
        const pids = (await readFile(pidFile, 'utf8')).split('\n').filter(Boolean).map(Number);
        assert.ok(pids.length >= 2, 'the server and its child wrote their pids');
        assert.deepEqual(await survivors(pids), [], 'a server process or its child outlived the probe');
        if (hang === 'all') {
          assert.equal(r.code, 1);
          assert.match(report.error, /no answer within the overall bound \(3000 ms\)/);
        } else {
          // Initialized: what the bound cut short is untested and says so, not a hang finding.
          assert.equal(report.error, undefined);
          const status = Object.fromEntries(report.leaves.map((l: { id: string; status: string }) => [l.id, l]));
          assert.equal(status['FAULT-PROTO-PING'].status, 'passed');
          const untested = report.leaves.filter(
            (l: { status: string; note?: string }) =>
              l.status === 'untested' && /overall bound \(3000 ms\)/.test(l.note ?? ''),
          );
          assert.ok(untested.length > 0, 'no leaf says the bound ended the run');
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
}

test('runProbe over HTTP: at the bound its requests to a hanging server are cut, no socket left open', async () => {
  const open = new Set<import('node:net').Socket>();
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      let message: { id?: unknown; method?: string } = {};
      try {
        message = JSON.parse(body) as typeof message;
      } catch {
        return void res.writeHead(400).end();
      }
      const answer = (result: unknown): void =>
        void res
          .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      if (message.method === 'initialize')
        answer({
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'hang', version: '1' },
        });
      else if (message.method === 'tools/list')
        answer({
          tools: [
            { name: 'wait_here', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } },
          ],
        });
      else if (message.method === 'ping') answer({});
      else if (message.id === undefined) res.writeHead(202).end();
      else held.push(res); // every other request hangs
    });
  });
  server.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  try {
    const bound = 2500;
    const started = Date.now();
    const report = await runProbe({ kind: 'http', url }, await loadTaxonomy(), {
      programs: ProgramPolicy.owner(),
      cases: 4,
      seed: 1,
      allowWrites: false,
      callTimeoutMs: 60_000,
      overallTimeoutMs: bound,
    });
    const took = Date.now() - started;
    assert.ok(took < bound * 4, `runProbe took ${took} ms for a ${bound} ms bound`);
    assert.ok(held.length > 0, 'the server held a request');
    // The probe's sockets close with it (the server sees them go within a moment).
    for (let i = 0; i < 40 && open.size > 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(open.size, 0, `${open.size} connection(s) from the probe still open`);
    assert.ok(report.leaves.some((l) => l.status === 'untested' && /overall bound/.test(l.note ?? '')));
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('an HTTP server that is not there: the error names the refused connection, at once', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  await new Promise((resolve) => server.close(resolve)); // the port is free again: nothing listens
  const bound = 20_000;
  const started = Date.now();
  const report = await runProbe({ kind: 'http', url }, await loadTaxonomy(), {
    programs: ProgramPolicy.owner(),
    cases: 1,
    seed: 1,
    allowWrites: false,
    callTimeoutMs: 5000,
    overallTimeoutMs: bound,
  });
  assert.match(
    report.error ?? '',
    new RegExp(`could not initialize the server: no connection to ${url.replace(/[.]/g, '\\.')} \\(ECONNREFUSED\\)`),
  );
  // Not waited out (given up within 0.5× the bound: bench/checks/probe.ts).
  assert.ok(Date.now() - started < bound, 'a refused connection is not waited out');
});
