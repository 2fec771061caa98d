/**
 * faultline's Toxiproxy API driven by toxiproxy-node-client, as a user's suite drives Toxiproxy:
 * proxies created, toggled, populated and reset; toxics added, read, updated and removed; and
 * each toxic's effect seen by a real TCP client on loopback (a delay measured, bytes counted, an
 * RST seen, data held). Bad input answers 400 with Toxiproxy's error shape and leaves nothing
 * half-made.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer, type ToxiproxyServer } from '../src/toxiproxy/server.js';
import { connect, echo, readBytes, readToEnd, startServer, waitClose, type TestServer } from './fixtures/proxy/net.js';

let api: ToxiproxyServer;
let client: Toxiproxy;
let upstream: TestServer;

before(async () => {
  upstream = await startServer(echo);
  api = await startToxiproxyServer({ host: '127.0.0.1', port: 0, policy: {}, seed: 7 });
  client = new Toxiproxy(api.url);
});

after(async () => {
  await api.close();
  await upstream.close();
});

const upstreamAddress = (): string => `127.0.0.1:${upstream.port}`;
const portOf = (listen: string): number => Number(listen.slice(listen.lastIndexOf(':') + 1));

async function raw(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}),
  });
  return { status: response.status, text: await response.text() };
}

/** Round trip of `bytes` through an echo behind `port`, in ms. */
async function roundTrip(port: number, bytes = 16): Promise<number> {
  const socket = await connect(port);
  try {
    const started = performance.now();
    socket.write(Buffer.alloc(bytes, 1));
    await readBytes(socket, bytes);
    return performance.now() - started;
  } finally {
    socket.destroy();
  }
}

/** Whether a connection to `port` is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('proxies through toxiproxy-node-client', () => {
  it('creates a proxy on port 0, answers the real port, and carries bytes', async () => {
    const proxy = await client.createProxy({ name: 'create', listen: '127.0.0.1:0', upstream: upstreamAddress() });
    assert.equal(proxy.enabled, true);
    assert.match(proxy.listen, /^127\.0\.0\.1:\d+$/);
    assert.notEqual(portOf(proxy.listen), 0);
    assert.ok((await roundTrip(portOf(proxy.listen))) >= 0);
    const again = await client.get('create');
    assert.deepEqual(again.toJson(), proxy.toJson());
    await assert.rejects(client.createProxy({ name: 'create', listen: '127.0.0.1:0', upstream: upstreamAddress() }));
    await proxy.remove();
    assert.equal(await refused(portOf(proxy.listen)), true);
  });

  it('toggles: disabled refuses new connections and closes open ones; enabled takes them again', async () => {
    const proxy = await client.createProxy({ name: 'toggle', listen: '127.0.0.1:0', upstream: upstreamAddress() });
    const port = portOf(proxy.listen);
    const open = await connect(port);
    const closed = waitClose(open);
    const down = await proxy.update({ enabled: false, listen: proxy.listen, upstream: proxy.upstream });
    assert.equal(down.enabled, false);
    await closed;
    assert.equal(await refused(port), true);
    const up = await down.update({ enabled: true, listen: proxy.listen, upstream: proxy.upstream });
    assert.equal(up.enabled, true);
    assert.equal(up.listen, proxy.listen, 'the same address again');
    assert.ok((await roundTrip(port)) >= 0);
    await up.remove();
  });

  it('populates: creates, keeps unchanged ones with their toxics, replaces changed ones', async () => {
    const first = await client.populate([
      { name: 'pop-a', listen: '127.0.0.1:0', upstream: upstreamAddress() },
      { name: 'pop-b', listen: '127.0.0.1:0', upstream: upstreamAddress() },
    ]);
    assert.deepEqual(Object.keys(first).sort(), ['pop-a', 'pop-b']);
    const a = first['pop-a']!;
    await a.addToxic({
      name: 'lat',
      type: 'latency',
      stream: 'downstream',
      toxicity: 1,
      attributes: { latency: 10, jitter: 0 },
    });
    const second = await client.populate([
      { name: 'pop-a', listen: a.listen, upstream: upstreamAddress() },
      { name: 'pop-b', listen: '127.0.0.1:0', upstream: '127.0.0.1:1' },
    ]);
    assert.equal(second['pop-a']!.listen, a.listen);
    assert.equal(JSON.parse((await raw('GET', '/proxies/pop-a/toxics')).text).length, 1, 'unchanged: toxics kept');
    assert.equal(second['pop-b']!.upstream, '127.0.0.1:1', 'changed: replaced');
    const empty = await raw('POST', '/populate', '[]');
    assert.deepEqual([empty.status, JSON.parse(empty.text)], [201, { proxies: null }]);
    await (await client.get('pop-a')).remove();
    await (await client.get('pop-b')).remove();
  });

  it('resets: every proxy enabled and every toxic removed', async () => {
    const proxy = await client.createProxy({ name: 'reset', listen: '127.0.0.1:0', upstream: upstreamAddress() });
    await proxy.addToxic({ name: 't', type: 'timeout', stream: 'upstream', toxicity: 1, attributes: { timeout: 0 } });
    await proxy.update({ enabled: false, listen: proxy.listen, upstream: proxy.upstream });
    await client.reset();
    const after = await client.get('reset');
    assert.equal(after.enabled, true);
    assert.deepEqual(JSON.parse((await raw('GET', '/proxies/reset/toxics')).text), []);
    assert.ok((await roundTrip(portOf(after.listen))) >= 0);
    await after.remove();
  });
});

describe('toxics CRUD and shapes', () => {
  it('adds with defaults, lists upstream first, updates in place, removes', async () => {
    const proxy = await client.createProxy({ name: 'crud', listen: '127.0.0.1:0', upstream: upstreamAddress() });
    const added = await raw(
      'POST',
      '/proxies/crud/toxics',
      JSON.stringify({ type: 'latency', attributes: { latency: 5 } }),
    );
    assert.equal(added.status, 200);
    assert.deepEqual(JSON.parse(added.text), {
      attributes: { latency: 5, jitter: 0 },
      name: 'latency_downstream',
      type: 'latency',
      stream: 'downstream',
      toxicity: 1,
    });
    await raw('POST', '/proxies/crud/toxics', JSON.stringify({ type: 'bandwidth', stream: 'UpStream', toxicity: 0.5 }));
    const listed = JSON.parse((await raw('GET', '/proxies/crud/toxics')).text) as Array<{
      name: string;
      stream: string;
    }>;
    assert.deepEqual(
      listed.map((t) => [t.name, t.stream]),
      [
        ['bandwidth_UpStream', 'UpStream'],
        ['latency_downstream', 'downstream'],
      ],
    );
    const toxic = await proxy.getToxic<{ latency: number; jitter: number }>('latency_downstream');
    const updated = await toxic.update({ attributes: { jitter: 2 } } as never);
    assert.deepEqual(updated.attributes, { latency: 5, jitter: 2 });
    assert.equal(updated.toxicity, 1, 'toxicity kept');
    const dup = await raw('POST', '/proxies/crud/toxics', JSON.stringify({ type: 'latency' }));
    assert.deepEqual([dup.status, JSON.parse(dup.text)], [409, { error: 'toxic already exists', status: 409 }]);
    await updated.remove();
    const gone = await raw('GET', '/proxies/crud/toxics/latency_downstream');
    assert.deepEqual([gone.status, JSON.parse(gone.text)], [404, { error: 'toxic not found', status: 404 }]);
    await proxy.remove();
  });

  it('answers bad input with 400 and Toxiproxy’s error shape, leaving nothing half-made', async () => {
    const cases: Array<[string, string, string, number, string]> = [
      ['POST', '/proxies', '{"name":"bad"}', 400, 'missing required field: upstream'],
      ['POST', '/proxies', '{"upstream":"127.0.0.1:1"}', 400, 'missing required field: name'],
      ['POST', '/proxies', '{"name":', 400, 'bad request body: '],
      ['POST', '/proxies', '', 400, 'bad request body: EOF'],
      ['POST', '/proxies', '{"name":"bad","upstream":"no port"}', 400, 'upstream "no port" is not HOST:PORT; write it'],
      ['POST', '/proxies', '{"name":"bad","upstream":"user@127.0.0.1:1"}', 400, 'upstream "user@127.0.0.1:1" is not'],
      ['POST', '/proxies', '{"name":"bad","upstream":"127.0.0.1:1","listen":"nowhere"}', 400, 'listen'],
      ['POST', '/proxies', '{"name":"bad","upstream":"169.254.169.254:80"}', 400, ''],
      ['GET', '/proxies/none', '', 404, 'proxy not found'],
    ];
    for (const [method, path, body, status, message] of cases) {
      const answer = await raw(method, path, method === 'GET' ? undefined : body);
      assert.equal(answer.status, status, `${method} ${path} ${body}: ${answer.text}`);
      const parsed = JSON.parse(answer.text) as { error: string; status: number };
      assert.equal(parsed.status, status);
      assert.ok(parsed.error.includes(message), parsed.error);
      assert.ok(!parsed.error.includes('PORT=HOST:PORT'), `our mapping grammar, which nobody wrote: ${parsed.error}`);
    }
    assert.deepEqual(Object.keys(await client.getAll()), [], 'no proxy half-made');
    await client.createProxy({ name: 'tox-bad', listen: '127.0.0.1:0', upstream: upstreamAddress() });
    const toxicCases: Array<[string, string]> = [
      ['{"type":"latency","stream":"sideways"}', 'stream was invalid, can be either upstream or downstream'],
      ['{"type":"nope"}', 'invalid toxic type'],
      ['{"type":"latency","attributes":{"latency":-5}}', 'attributes.latency'],
      ['{"type":"slicer","attributes":{"average_size":0}}', 'attributes.average_size'],
      ['{"type":"latency","toxicity":2}', 'toxicity'],
      ['{"type":"http_error"}', 'http://'],
      // An attribute no toxic has, on a type of ours: named, with the attributes (not type, name, stream) it takes.
      [
        '{"type":"packet_loss","attributes":{"loss_rate":0.1,"bogus":1}}',
        'unknown attribute "bogus" (accepted attributes: loss_rate, model,',
      ],
      // Named as written, not as the field it was read into (burstLen).
      ['{"type":"packet_loss","attributes":{"loss_rate":0.1,"burst_len":1}}', 'unknown attribute "burst_len"'],
    ];
    for (const [body, message] of toxicCases) {
      const answer = await raw('POST', '/proxies/tox-bad/toxics', body);
      assert.equal(answer.status, 400, `${body}: ${answer.text}`);
      assert.ok((JSON.parse(answer.text) as { error: string }).error.includes(message), answer.text);
    }
    assert.deepEqual(JSON.parse((await raw('GET', '/proxies/tox-bad/toxics')).text), [], 'no toxic half-made');
    // Toxiproxy's own types ignore an attribute they do not have, as its JSON decoding does.
    const lenient = await raw(
      'POST',
      '/proxies/tox-bad/toxics',
      '{"type":"latency","attributes":{"latency":5,"bogus":1}}',
    );
    assert.equal(lenient.status, 200, lenient.text);
    assert.deepEqual(JSON.parse(lenient.text).attributes, { latency: 5, jitter: 0 });
    await (await client.get('tox-bad')).remove();
    await client.createProxy({ name: 'tox-http', listen: '127.0.0.1:0', upstream: `http://${upstreamAddress()}` });
    const http = await raw('POST', '/proxies/tox-http/toxics', '{"type":"http_error","attributes":{"bogus":1}}');
    assert.equal(http.status, 400, http.text);
    assert.match(
      JSON.parse(http.text).error,
      /unknown attribute "bogus" \(accepted attributes: method, path, status_code/,
    );
    await (await client.get('tox-http')).remove();
  });

  it('refuses a listen address in use with a clear 500', async () => {
    const holder = await startServer(echo);
    const answer = await raw(
      'POST',
      '/proxies',
      JSON.stringify({ name: 'busy', listen: `127.0.0.1:${holder.port}`, upstream: upstreamAddress() }),
    );
    await holder.close();
    assert.equal(answer.status, 500);
    assert.equal(
      (JSON.parse(answer.text) as { error: string }).error,
      `listen tcp 127.0.0.1:${holder.port}: bind: address already in use`,
    );
    assert.equal((await raw('GET', '/proxies/busy')).status, 404);
  });
});

describe('each toxic on a real TCP client', () => {
  const proxyWith = async (name: string, toxic: Record<string, unknown>): Promise<number> => {
    const proxy = await client.createProxy({ name, listen: '127.0.0.1:0', upstream: upstreamAddress() });
    const answer = await raw('POST', `/proxies/${name}/toxics`, JSON.stringify(toxic));
    assert.equal(answer.status, 200, answer.text);
    return portOf(proxy.listen);
  };

  it('latency delays each chunk by about its latency', async () => {
    const port = await proxyWith('t-latency', { type: 'latency', attributes: { latency: 300 } });
    const took = await roundTrip(port);
    assert.ok(took >= 290 && took < 3000, `round trip ${took} ms`);
  });

  it('bandwidth caps the rate in KB/s', async () => {
    const port = await proxyWith('t-bandwidth', { type: 'bandwidth', attributes: { rate: 64 } });
    const took = await roundTrip(port, 64 * 1024);
    assert.ok(took >= 800, `64 KiB at 64 KB/s took ${took} ms`);
  });

  it('slicer cuts the stream into small pieces', async () => {
    const port = await proxyWith('t-slicer', {
      type: 'slicer',
      attributes: { average_size: 16, size_variation: 4, delay: 40_000 },
    });
    const socket = await connect(port);
    const sizes: number[] = [];
    socket.on('data', (data: Buffer) => sizes.push(data.length));
    socket.write(Buffer.alloc(320, 7));
    while (sizes.reduce((a, b) => a + b, 0) < 320) await new Promise((resolve) => setTimeout(resolve, 20));
    socket.destroy();
    // 40 ms apart: a reader sees them one by one unless its event loop stalls that long.
    assert.ok(sizes.length >= 6, `${sizes.length} pieces: ${sizes.join(',')}`);
    assert.ok(sizes.filter((size) => size <= 20).length >= 4, `pieces: ${sizes.join(',')}`);
  });

  it('limit_data passes exactly N bytes, then closes', async () => {
    const port = await proxyWith('t-limit', { type: 'limit_data', attributes: { bytes: 100 } });
    const socket = await connect(port);
    const received = readToEnd(socket);
    socket.write(Buffer.alloc(300, 1));
    assert.equal((await received).length, 100);
  });

  it('reset_peer resets the connection (ECONNRESET)', async () => {
    const port = await proxyWith('t-reset', { type: 'reset_peer', attributes: { timeout: 50 } });
    const socket = net.connect({ port, host: '127.0.0.1' });
    const error = new Promise<string>((resolve) => {
      socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      socket.once('close', () => resolve('closed without error'));
    });
    socket.write('hello');
    assert.equal(await error, 'ECONNRESET');
  });

  it('slow_close delays the close', async () => {
    const port = await proxyWith('t-slow-close', { type: 'slow_close', attributes: { delay: 400 } });
    const socket = await connect(port, '127.0.0.1', { allowHalfOpen: true });
    const started = performance.now();
    const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
    socket.resume();
    socket.end('bye');
    await ended;
    const took = performance.now() - started;
    assert.ok(took >= 380, `end after ${took} ms`);
  });

  it('timeout 0 holds data until removed, and removal closes the connection', async () => {
    const port = await proxyWith('t-timeout', { type: 'timeout', attributes: { timeout: 0 } });
    const socket = await connect(port);
    let got = 0;
    socket.on('data', (data: Buffer) => (got += data.length));
    const closed = waitClose(socket);
    socket.write('held');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(got, 0, 'nothing passed while held');
    assert.equal((await raw('DELETE', '/proxies/t-timeout/toxics/timeout_downstream')).status, 204);
    await closed;
  });

  it('timeout N closes the connection after N ms', async () => {
    const port = await proxyWith('t-timeout-n', { type: 'timeout', attributes: { timeout: 200 } });
    const socket = await connect(port);
    const started = performance.now();
    socket.write('x');
    await waitClose(socket);
    assert.ok(performance.now() - started >= 180);
  });

  it('toxicity picks connections: 0 touches none', async () => {
    const port = await proxyWith('t-toxicity', { type: 'latency', toxicity: 0, attributes: { latency: 2000 } });
    assert.ok((await roundTrip(port)) < 1500);
  });

  it('extra types: packet_loss and blackhole through the same API, with counters', async () => {
    const port = await proxyWith('t-extra', { type: 'packet_loss', attributes: { loss_rate: 0.5 } });
    assert.ok((await roundTrip(port, 4096)) >= 0);
    const counters = JSON.parse((await raw('GET', '/proxies/t-extra/counters')).text) as {
      faults: Array<{ name: string; type: string; segments: number }>;
    };
    const fault = counters.faults.find((f) => f.name === 'packet_loss_downstream');
    assert.equal(fault?.type, 'packet_loss');
    assert.ok((fault?.segments ?? 0) > 0);
  });

  it('serves /metrics with Toxiproxy’s names and ours', async () => {
    const metrics = await raw('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /toxiproxy_proxy_received_bytes_total\{direction="upstream",proxy="t-extra"/);
    assert.match(metrics.text, /toxiproxy_proxy_sent_bytes_total/);
    assert.match(metrics.text, /faultline_fault_applications_total\{proxy="t-extra",fault="packet_loss_downstream"/);
  });
});
