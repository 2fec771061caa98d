/**
 * `faultline toxiproxy --admin-token` mounts the admin API's /chaos routes on the Toxiproxy API's
 * port, over the same proxies: `faultline chaos` (a real child process) injects a fault on a
 * Toxiproxy proxy by its name, GET /proxies/{name}/toxics shows it, a real TCP client feels it,
 * /chaos/status counts what acted (Toxiproxy-made toxics too), and clearing either way removes it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { connect, destroyAndWait, echo, readBytes, startServer, type TestServer } from './fixtures/proxy/net.js';
import { freePort, startFaultlineToxiproxy, type ApiProcess } from './fixtures/toxiproxy.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const TOKEN = 'chaos-test-token';
const AUTH = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

interface Ran {
  code: number;
  out: string;
  err: string;
}

function chaos(api: ApiProcess, args: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'chaos', ...args, '--admin', api.url],
      { encoding: 'utf8', env: { ...process.env, FAULTLINE_ADMIN_TOKEN: TOKEN }, timeout: 30_000 },
      (error, out, err) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers = AUTH,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // text
  }
  return { status: response.status, body: parsed };
}

/** Milliseconds of one 64-byte round trip through `port` to the echo server. */
async function roundTripMs(port: number): Promise<number> {
  const client = await connect(port);
  const start = performance.now();
  client.write(Buffer.alloc(64, 1));
  await readBytes(client, 64);
  const ms = performance.now() - start;
  await destroyAndWait(client);
  return ms;
}

describe('faultline toxiproxy --admin-token: the /chaos routes over the same proxies', () => {
  let upstream: TestServer;
  let server: ApiProcess;
  let port: number;

  before(async () => {
    upstream = await startServer(echo);
    server = await startFaultlineToxiproxy(TOKEN);
    port = await freePort();
    const created = await api(server.url, 'POST', '/proxies', {
      name: 'p1',
      listen: `127.0.0.1:${port}`,
      upstream: `127.0.0.1:${upstream.port}`,
    });
    assert.equal(created.status, 201);
  });

  after(async () => {
    assert.equal(await server.stop(), 0);
    await upstream.close();
  });

  it('faultline chaos inject --target p1 is a toxic of p1, felt by a client and counted', async () => {
    const injected = await chaos(server, ['inject', 'p1', 'latency', '--config', '{"latencyMs":400}']);
    assert.equal(injected.code, 0, injected.err);
    const id = injected.out.trim();
    assert.match(id, /^p1-\d+-\w+$/);
    const toxics = await api(server.url, 'GET', '/proxies/p1/toxics');
    assert.deepEqual(toxics.body, [
      { attributes: { latencyMs: 400 }, name: id, type: 'latency', stream: 'downstream', toxicity: 1 },
    ]);
    assert.ok((await roundTripMs(port)) >= 350, 'the injected latency delays the echo');
    const added = await api(server.url, 'POST', '/proxies/p1/toxics', {
      type: 'slicer',
      attributes: { average_size: 8 },
    });
    assert.equal(added.status, 200);
    await roundTripMs(port);
    const status = await api(server.url, 'GET', '/chaos/status');
    const faults = (status.body as { faults: Array<{ id: string; requestCount: number }> }).faults;
    assert.deepEqual(
      faults.map((f) => f.id),
      [id, 'p1/slicer_downstream'],
    );
    assert.ok(
      faults.every((f) => f.requestCount >= 1),
      JSON.stringify(faults),
    );
    const listed = await chaos(server, ['status']);
    assert.match(listed.out, new RegExp(`${id} → p1 \\[latency\\]`));
    const update = await api(server.url, 'POST', `/proxies/p1/toxics/${id}`, { attributes: { latency: 1 } });
    assert.equal(update.status, 400);

    assert.equal((await chaos(server, ['clear', id])).code, 0);
    assert.deepEqual(
      ((await api(server.url, 'GET', '/proxies/p1/toxics')).body as Array<{ name: string }>).map((t) => t.name),
      ['slicer_downstream'],
    );
    assert.ok((await roundTripMs(port)) < 350, 'cleared: no delay left');
    assert.equal((await chaos(server, ['clear-all'])).code, 0);
    assert.deepEqual((await api(server.url, 'GET', '/proxies/p1/toxics')).body, []);
  });

  it("an experiment's control plane sets a fault on a Toxiproxy proxy by name, and it acted", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-tp-exp-'));
    const file = join(dir, 'exp.yaml');
    writeFileSync(
      file,
      [
        'title: a Toxiproxy proxy driven by an experiment',
        'duration: 4s',
        `control: {tp: {url: "${server.url}"}}`,
        'method:',
        '  - {at: 1s, for: 2s, via: tp, fault: {target: p1, type: latency, latencyMs: 300}}',
        '',
      ].join('\n'),
    );
    let running = true;
    let slow = 0;
    // A client through p1 all along, so the fault's window meets traffic however late the run starts.
    const client = (async () => {
      while (running) if ((await roundTripMs(port)) >= 250) slow++;
    })();
    try {
      const ran = await new Promise<Ran>((resolve) =>
        execFile(
          process.execPath,
          [CLI, 'experiment', 'run', file],
          { encoding: 'utf8', env: { ...process.env, FAULTLINE_ADMIN_TOKEN: TOKEN }, timeout: 60_000 },
          (error, out, err) => resolve({ code: error ? 1 : 0, out, err }),
        ),
      );
      assert.match(
        ran.out,
        /\| latency on tp\/p1 at 1s \|.*\| yes: the plane counted [1-9]\d* delays/,
        ran.out + ran.err,
      );
    } finally {
      running = false;
      await client;
      rmSync(dir, { recursive: true, force: true });
    }
    assert.ok(slow >= 1, 'a client through p1 felt the latency');
    assert.deepEqual((await api(server.url, 'GET', '/proxies/p1/toxics')).body, []);
  });

  it('a fault expires after its duration; an unknown proxy, a bad config or no token is refused', async () => {
    const injected = await api(server.url, 'POST', '/chaos/inject', {
      target: 'p1',
      config: { type: 'blackhole' },
      durationMs: 100,
    });
    assert.equal(injected.status, 200);
    for (let i = 0; i < 200; i++) {
      if (((await api(server.url, 'GET', '/proxies/p1/toxics')).body as unknown[]).length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual((await api(server.url, 'GET', '/proxies/p1/toxics')).body, []);
    const unknown = await chaos(server, ['inject', 'nope', 'latency', '--config', '{"latencyMs":1}']);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.err, /target: "nope" names no proxy; proxies: p1/);
    const http = await api(server.url, 'POST', '/chaos/inject', { target: 'p1', config: { type: 'error' } });
    assert.equal(http.status, 400);
    assert.match(JSON.stringify(http.body), /does not read HTTP/);
    const bad = await api(server.url, 'POST', '/chaos/inject', { target: 'p1', config: { type: 'jitter', x: 1 } });
    assert.equal(bad.status, 400);
    assert.deepEqual((await api(server.url, 'GET', '/proxies/p1/toxics')).body, []);
    const anonymous = await api(server.url, 'GET', '/chaos/status', undefined, {
      authorization: '',
      'content-type': '',
    });
    assert.equal(anonymous.status, 401);
  });
});

describe('faultline toxiproxy without a token', () => {
  it('has no /chaos routes (the admin API always needs a token)', async () => {
    const server = await startFaultlineToxiproxy();
    try {
      const status = await fetch(`${server.url}/chaos/status`);
      assert.equal(status.status, 404);
      await status.text();
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});
