/**
 * The probe's overall bound (`--timeout`), timed: against servers that hang and ignore SIGTERM
 * (test/fixtures/probe/hang-server.mjs), over stdio through the CLI and over HTTP through
 * runProbe, and against an HTTP address nothing listens on. test/probe-bound.test.ts holds the
 * behaviour (never early, nothing left running, what the report says).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTaxonomy, runProbe } from '../../src/probe/index.js';
import { cliPath, fixturePath } from '../../test/helpers/repo.js';
import type { BenchCheck, Row } from '../lib/check.js';
import { ProgramPolicy } from '../../src/consent/index.js';

/** `faultline probe` against a hanging stdio server: the report's duration and the process's wall time, in ms. */
async function probeCli(hang: 'all' | 'calls', bound: number): Promise<{ reported: number; wall: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-bench-probe-'));
  try {
    const started = performance.now();
    await new Promise<void>((resolve) =>
      execFile(
        process.execPath,
        [
          cliPath,
          'probe',
          '--quiet',
          '--timeout',
          String(bound),
          '--json',
          join(dir, 'r.json'),
          '--',
          process.execPath,
          fixturePath('probe', 'hang-server.mjs'),
        ],
        { env: { ...process.env, HANG: hang, PIDS: join(dir, 'pids') }, timeout: 60_000 },
        () => resolve(),
      ),
    );
    const wall = performance.now() - started;
    const report = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8')) as { durationMs: number };
    return { reported: report.durationMs, wall };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** runProbe over HTTP against a server that answers initialize and tools/list, then holds every request; ms. */
async function httpHang(bound: number): Promise<number> {
  const held: ServerResponse[] = [];
  const open = new Set<Socket>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const message = JSON.parse(body || '{}') as { id?: unknown; method?: string };
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
      else held.push(res);
    });
  });
  server.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const started = performance.now();
    await runProbe(
      { kind: 'http', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` },
      await loadTaxonomy(),
      {
        cases: 4,
        seed: 1,
        allowWrites: false,
        callTimeoutMs: 60_000,
        overallTimeoutMs: bound,
        programs: ProgramPolicy.owner(),
      },
    );
    return performance.now() - started;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const overallBound: BenchCheck = {
  name: 'probe.overall-bound',
  measures:
    'how long a probe bounded by --timeout lasts against servers that ' +
    "hang and ignore SIGTERM: the run (its report's durationMs) and " +
    'the process after it, over stdio; runProbe over HTTP; a refused ' +
    'HTTP address',
  peer: 'the bound asked for (3,000 ms over stdio, 2,500 over HTTP, 20,000 for the refused address)',
  target:
    'the run within 1.25 × its bound, the process no more than 0.5 × ' +
    'the bound longer than its report; a refused address given up ' +
    'within 0.5 × the bound (before, stopping the server added 1.5–3 ' +
    's to a 3 s bound)',
  tests: ['test/probe-bound.test.ts'],
  async run() {
    const rows: Row[] = [];
    for (const hang of ['all', 'calls'] as const) {
      const bound = 3000;
      const { reported, wall } = await probeCli(hang, bound);
      const peer = { label: 'bound', value: bound, unit: 'ms' };
      rows.push(
        {
          label: `stdio, HANG=${hang}: run`,
          ours: { label: 'reported', value: reported, unit: 'ms' },
          peer,
          target: { on: 'ratio', atLeast: 0.95, atMost: 1.25 },
        },
        {
          label: `stdio, HANG=${hang}: process after the run`,
          ours: { label: 'wall − reported', value: wall - reported, unit: 'ms' },
          peer,
          target: { on: 'ratio', atMost: 0.5 },
        },
      );
    }
    rows.push({
      label: 'HTTP, holding every call',
      ours: { label: 'runProbe took', value: await httpHang(2500), unit: 'ms' },
      peer: { label: 'bound', value: 2500, unit: 'ms' },
      target: { on: 'ratio', atMost: 1.25 },
    });
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    await new Promise((resolve) => server.close(resolve));
    const started = performance.now();
    await runProbe({ kind: 'http', url }, await loadTaxonomy(), {
      programs: ProgramPolicy.owner(),
      cases: 1,
      seed: 1,
      allowWrites: false,
      callTimeoutMs: 5000,
      overallTimeoutMs: 20_000,
    });
    rows.push({
      label: 'HTTP, nothing listening',
      ours: { label: 'gave up after', value: performance.now() - started, unit: 'ms' },
      peer: { label: 'bound', value: 20_000, unit: 'ms' },
      target: { on: 'ratio', atMost: 0.5 },
    });
    return rows;
  },
};

export const checks: BenchCheck[] = [overallBound];
