/**
 * The same Toxiproxy API calls against the real toxiproxy-server and `faultline toxiproxy`, the
 * answers compared field by field: status codes, content types, the keys and types of every
 * JSON value, and the values that do not depend on the run (names, messages, attributes, the
 * port given back when port 0 was asked for is not 0). Also: SIGTERM ends both, with no proxy
 * port left open. Skipped, with the reason, when the real binary is not built here.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { echo, startServer, type TestServer } from './fixtures/proxy/net.js';
import {
  call,
  realToxiproxyPath,
  startFaultlineToxiproxy,
  startRealToxiproxy,
  type ApiProcess,
} from './fixtures/toxiproxy.js';

const real = realToxiproxyPath();
const skip = real
  ? false
  : 'toxiproxy-server is not built here (bash ' +
    '../shared/tools/build-toxiproxy.sh /tmp/toxiproxy-build, or ' +
    'TOXIPROXY_SERVER=path)';

/** The shape of a JSON value: its type, and for objects and arrays the shapes inside. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === 'object') {
    // Toxiproxy leaks its logger as "Logger": {} on a proxy; no client reads it.
    const entries = Object.entries(value).filter(([key]) => key !== 'Logger');
    return Object.fromEntries(entries.map(([key, inner]) => [key, shape(inner)]));
  }
  return value === null ? 'null' : typeof value;
}

/** Run-dependent values (ports) replaced, so the rest compares as values. */
function stable(value: unknown): unknown {
  const text = JSON.stringify(value, (key, inner) => (key === 'Logger' ? undefined : inner));
  return text === undefined ? value : JSON.parse(text.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT'));
}

/** Connects and waits for the connection to close: "closed, N bytes", or "open after N ms". */
function untilClosed(port: number, withinMs: number): Promise<string> {
  return new Promise((resolve) => {
    let bytes = 0;
    const socket = net.connect({ port, host: '127.0.0.1' });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(`open after ${withinMs} ms`);
    }, withinMs);
    socket.on('data', (data: Buffer) => {
      bytes += data.length;
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(`closed, ${bytes} bytes`);
    });
  });
}

describe('the Toxiproxy API, side by side with toxiproxy-server', { skip }, () => {
  let theirs: ApiProcess;
  let ours: ApiProcess;
  let upstream: TestServer;

  before(async () => {
    upstream = await startServer(echo);
    [theirs, ours] = await Promise.all([startRealToxiproxy(real!), startFaultlineToxiproxy()]);
  });

  after(async () => {
    await Promise.all([theirs?.stop(), ours?.stop()]);
    await upstream?.close();
  });

  /** Each call, in order, against both; every answer compared. */
  const script = (): Array<[string, string, unknown?]> => {
    const up = `127.0.0.1:${upstream.port}`;
    return [
      ['GET', '/proxies'],
      ['POST', '/proxies', { name: 'p1', listen: '127.0.0.1:0', upstream: up }],
      ['POST', '/proxies', { name: 'p1', listen: '127.0.0.1:0', upstream: up }],
      ['POST', '/proxies', { name: 'p2' }],
      ['POST', '/proxies', { upstream: up }],
      ['POST', '/proxies', '{"name":'],
      ['GET', '/proxies/p1'],
      ['GET', '/proxies/none'],
      ['POST', '/proxies/p1/toxics', { type: 'latency', attributes: { latency: 400 } }],
      ['POST', '/proxies/p1/toxics', { type: 'latency', attributes: { latency: 400 } }],
      [
        'POST',
        '/proxies/p1/toxics',
        { type: 'bandwidth', stream: 'upstream', toxicity: 0.5, attributes: { rate: 64 } },
      ],
      ['POST', '/proxies/p1/toxics', { type: 'slicer', name: 's', attributes: { average_size: 16, delay: 10 } }],
      ['POST', '/proxies/p1/toxics', { type: 'limit_data', attributes: { bytes: 10 } }],
      ['POST', '/proxies/p1/toxics', { type: 'timeout', stream: 'upstream', attributes: { timeout: 0 } }],
      ['POST', '/proxies/p1/toxics', { type: 'reset_peer', name: 'r', attributes: { timeout: 10 } }],
      ['POST', '/proxies/p1/toxics', { type: 'slow_close', attributes: { delay: 10 } }],
      ['POST', '/proxies/p1/toxics', { type: 'nope' }],
      ['POST', '/proxies/p1/toxics', { type: 'latency', stream: 'sideways' }],
      ['GET', '/proxies/p1/toxics'],
      ['GET', '/proxies/p1/toxics/latency_downstream'],
      ['POST', '/proxies/p1/toxics/latency_downstream', { attributes: { jitter: 5 } }],
      ['POST', '/proxies/p1/toxics/latency_downstream', { toxicity: 0.25 }],
      ['GET', '/proxies/p1/toxics/none'],
      ['DELETE', '/proxies/p1/toxics/s'],
      ['DELETE', '/proxies/p1/toxics/s'],
      ['GET', '/proxies/p1'],
      ['POST', '/proxies/p1', { enabled: false }],
      ['POST', '/proxies/p1', { enabled: true }],
      ['POST', '/populate', []],
      ['POST', '/populate', [{ name: 'p3', listen: '127.0.0.1:0', upstream: up }]],
      ['POST', '/populate', [{ name: 'p4', listen: '127.0.0.1:0' }]],
      ['POST', '/reset'],
      ['GET', '/proxies'],
      ['PUT', '/proxies'],
      ['GET', '/nothing'],
      ['DELETE', '/proxies/p3'],
      ['DELETE', '/proxies/p3'],
    ];
  };

  it('answers every call with the same status, content type and JSON shape', async () => {
    const differences: string[] = [];
    for (const [method, path, body] of script()) {
      const [a, b] = [await call(theirs.url, method, path, body), await call(ours.url, method, path, body)];
      const what = `${method} ${path} ${body === undefined ? '' : JSON.stringify(body)}`;
      if (a.status !== b.status) differences.push(`${what}: status ${a.status} vs ${b.status}`);
      if (a.type.split(';')[0] !== b.type.split(';')[0])
        differences.push(`${what}: content type ${a.type} vs ${b.type}`);
      try {
        assert.deepEqual(shape(b.body), shape(a.body));
      } catch {
        differences.push(`${what}: shape ${JSON.stringify(shape(a.body))} vs ${JSON.stringify(shape(b.body))}`);
        continue;
      }
      // Error messages and attributes as values; JSON parse errors are worded by each language.
      if (typeof a.body === 'object' && !/^bad request body/.test(String((a.body as { error?: unknown })?.error))) {
        try {
          assert.deepEqual(stable(b.body), stable(a.body));
        } catch {
          differences.push(`${what}: ${JSON.stringify(stable(a.body))} vs ${JSON.stringify(stable(b.body))}`);
        }
      }
    }
    assert.deepEqual(differences, []);
  });

  it('closes a timeout-toxic connection when its sender ends, whatever the timeout', async () => {
    // An upstream that says hello and hangs up at once; the toxic (downstream) drops the hello.
    const hangUp = net.createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
    const up = `127.0.0.1:${(hangUp.address() as net.AddressInfo).port}`;
    try {
      for (const timeout of [60_000, 0]) {
        const seen: string[] = [];
        for (const api of [theirs, ours]) {
          const name = `hang_${timeout}`;
          const created = await call(api.url, 'POST', '/proxies', { name, listen: '127.0.0.1:0', upstream: up });
          const port = Number((created.body as { listen: string }).listen.split(':')[1]);
          await call(api.url, 'POST', `/proxies/${name}/toxics`, { type: 'timeout', attributes: { timeout } });
          seen.push(`${api.name}: ${await untilClosed(port, 5_000)}`);
          await call(api.url, 'DELETE', `/proxies/${name}`);
        }
        assert.deepEqual(
          seen,
          [`${theirs.name}: closed, 0 bytes`, `${ours.name}: closed, 0 bytes`],
          `timeout ${timeout}`,
        );
      }
    } finally {
      hangUp.close();
    }
  });

  it('ends on SIGTERM with no proxy port left open', async () => {
    const created = await call(ours.url, 'POST', '/proxies', {
      name: 'last',
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${upstream.port}`,
    });
    const port = Number((created.body as { listen: string }).listen.split(':')[1]);
    assert.equal(await ours.stop(), 0);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => resolve(false));
      socket.once('error', () => resolve(true));
    });
    assert.equal(refused, true, `port ${port} still open`);
  });
});
