/**
 * The production guard where faults are injected (src/production.ts), not at the doors: a proxy's
 * start, a scenario's run, the tool-call plane's proxies, a probe that writes, the Toxiproxy API.
 * Each is driven directly (no tool, no command in front of it) with the production signal in the
 * environment, as production.ts reads it, and must refuse before anything listens, connects or
 * starts; allowed (the option, or FAULTLINE_ALLOW_PRODUCTION=1), the same call works on real sockets.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ProgramPolicy } from '../src/consent/index.js';
import { makeConfig } from '../src/config.js';
import { ProductionRefused } from '../src/production.js';
import { runProbe } from '../src/probe/runner.js';
import { loadTaxonomy } from '../src/probe/taxonomy.js';
import { startProxy } from '../src/proxy/index.js';
import { runScenario, scenarioFromArguments } from '../src/scenario/index.js';
import { startHttpProxy } from '../src/toolcall/http-proxy.js';
import { EMPTY_PLAN } from '../src/toolcall/plan.js';
import { ToolPlane } from '../src/toolcall/session.js';
import { runStdioProxy } from '../src/toolcall/stdio-proxy.js';
import { targetLookup } from '../src/target-policy.js';
import { startToxiproxyServer } from '../src/toxiproxy/server.js';
import { runCliProcess, startCliProcess } from './helpers/processes.js';
import { freePort } from '../src/proxy/ephemeral-ports.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-production-'));
let saved: Record<string, string | undefined>;

before(() => {
  saved = { NODE_ENV: process.env.NODE_ENV, FAULTLINE_ALLOW_PRODUCTION: process.env.FAULTLINE_ALLOW_PRODUCTION };
  delete process.env.FAULTLINE_ALLOW_PRODUCTION;
  process.env.NODE_ENV = 'production';
});
after(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  rmSync(dir, { recursive: true, force: true });
});

const refused = (what: string) => (error: unknown) =>
  error instanceof ProductionRefused &&
  error.message === `refused to ${what}: NODE_ENV=production says this is production`;

/** A loopback TCP server that counts the connections it accepts (echoing what it reads). */
async function countingServer(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Whether bytes written to the port come back (through a relay to the echoing server). */
function echoes(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('data', (data) => (socket.destroy(), resolve(data.toString() === 'ping')));
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => socket.write('ping'));
  });
}

/** Whether something accepts a TCP connection on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

test('a proxy refuses to start, binding nothing; allowed, it relays', async () => {
  const upstream = await countingServer();
  const port = await freePort();
  try {
    await assert.rejects(
      startProxy({ mappings: [`${port}=127.0.0.1:${upstream.port}`] }),
      refused('start a fault proxy'),
    );
    assert.equal(await listening(port), false);
    for (const allow of [{ allowProduction: true }, {}] as const) {
      if (!('allowProduction' in allow)) process.env.FAULTLINE_ALLOW_PRODUCTION = '1';
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${upstream.port}`], ...allow });
      try {
        assert.equal(await echoes(proxy.ports[0]!), true);
      } finally {
        await proxy.stop();
        delete process.env.FAULTLINE_ALLOW_PRODUCTION;
      }
    }
    assert.equal(upstream.connections(), 2, 'only the allowed proxies reached the server');
  } finally {
    await upstream.close();
  }
});

test('a scenario refuses to run before its first request', async () => {
  let requests = 0;
  const { createServer: createHttpServer } = await import('node:http');
  const app = createHttpServer((_req, res) => (requests++, res.end('ok')));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
    const spec = await scenarioFromArguments('latency', { url, duration: '200ms', latency: 1 }, makeConfig().scenario);
    await assert.rejects(runScenario(spec), refused('run a fault scenario'));
    assert.equal(requests, 0);
  } finally {
    app.closeAllConnections();
    await new Promise<void>((resolve) => app.close(() => resolve()));
  }
});

test('the tool-call plane: the stdio proxy starts no server, the HTTP proxy listens nowhere', async () => {
  const marker = join(dir, 'toolcall-marker');
  const plane = new ToolPlane(EMPTY_PLAN);
  await assert.rejects(
    runStdioProxy({
      command: 'touch',
      args: [marker],
      programs: ProgramPolicy.owner(),
      plane,
      input: process.stdin,
      output: process.stdout,
    }),
    refused('start a tool-call fault proxy'),
  );
  const port = await freePort();
  await assert.rejects(
    startHttpProxy({ plane, upstream: 'http://127.0.0.1:9/mcp', port, lookup: targetLookup(false) }),
    refused('start a tool-call fault proxy'),
  );
  assert.equal(await listening(port), false);
  assert.equal(existsSync(marker), false);
  const allowed = await startHttpProxy({
    plane,
    upstream: 'http://127.0.0.1:9/mcp',
    lookup: targetLookup(false),
    allowProduction: true,
  });
  try {
    assert.equal(await listening(allowed.port), true);
  } finally {
    await allowed.close();
  }
});

test('a probe that calls tools that write starts no server', async () => {
  const marker = join(dir, 'probe-marker');
  const options = {
    cases: 1,
    seed: 1,
    callTimeoutMs: 1000,
    overallTimeoutMs: 5000,
    programs: ProgramPolicy.owner(),
  };
  const target = { kind: 'stdio' as const, command: 'touch', args: [marker] };
  await assert.rejects(
    runProbe(target, await loadTaxonomy(), { ...options, allowWrites: true }),
    refused('call tools that write'),
  );
  assert.equal(existsSync(marker), false);
  // Read-only, a probe injects nothing: it runs (touch is no MCP server, which the report says).
  const report = await runProbe(target, await loadTaxonomy(), { ...options, allowWrites: false });
  assert.ok(report, 'a read-only probe ran');
});

test('the Toxiproxy API refuses to serve; the command says how to allow it', async () => {
  await assert.rejects(
    startToxiproxyServer({ host: '127.0.0.1', port: 0, policy: { allowNonLoopbackBind: false } }),
    refused('serve the Toxiproxy API'),
  );
  const outcome = await runCliProcess(['toxiproxy', '-port', '0'], { NODE_ENV: 'production' });
  assert.equal(outcome.code, 2, outcome.stderr);
  assert.match(
    outcome.stderr,
    /refused to serve the Toxiproxy API: NODE_ENV=production says this is production; pass --allow-production/,
  );
  const allowed = startCliProcess(['toxiproxy', '-port', '0', '--allow-production'], { NODE_ENV: 'production' });
  try {
    await allowed.waitFor(/toxiproxy: API listening on /);
  } finally {
    await allowed.stop();
  }
});
