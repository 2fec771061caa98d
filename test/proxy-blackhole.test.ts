/**
 * A blackhole and a refusal on opaque TCP mappings, as a network engineer means them (tc, FIS and
 * Chaos Mesh drop packets): the origin, a real TCP server that logs what it accepts, sees no
 * connection while a blackhole is on; a client that gave up is never delivered afterwards; a client
 * still waiting when it ends gets its remote then. Real clients too: psql, and a real redis-server.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { describe, it } from 'node:test';
import { startProxy, type ProxyEvent, type RunningProxy } from '../src/proxy/index.js';
import { connect, readBytes, startServer, waitClose, type TestServer } from './fixtures/proxy/net.js';
import { RespClient, redisUnavailable, startRedis } from './fixtures/redis.js';

/** An origin that logs each accepted connection and what it received, and echoes. */
interface Origin {
  server: TestServer;
  accepted: Array<{ socket: net.Socket; received: Buffer[]; closed: boolean }>;
}

async function startOrigin(): Promise<Origin> {
  const accepted: Origin['accepted'] = [];
  const server = await startServer((socket) => {
    const entry = { socket, received: [] as Buffer[], closed: false };
    accepted.push(entry);
    socket.on('data', (data: Buffer) => {
      entry.received.push(data);
      socket.write(data);
    });
    socket.on('end', () => socket.end());
    socket.once('close', () => (entry.closed = true));
  });
  return { server, accepted };
}

const received = (origin: Origin): string => origin.accepted.map((a) => Buffer.concat(a.received).toString()).join('|');

/** Waits (bounded) for what another socket or process does; never a fixed sleep. */
async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 15_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    assert.ok(Date.now() - started < limitMs, `not within ${limitMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const queued = (proxy: RunningProxy): number => proxy.counters().mappings[0]!.bytesQueued;
const active = (proxy: RunningProxy): number => proxy.counters().mappings[0]!.activeConnections;

/** After the fault ended: a new client's round trip proves the proxy passes again (dials are in accept order). */
async function controlRoundTrip(proxy: RunningProxy): Promise<void> {
  const control = await connect(proxy.ports[0]!);
  control.write('control');
  assert.equal((await readBytes(control, 7)).toString(), 'control');
  control.destroy();
}

async function withOriginProxy(
  http: boolean,
  run: (origin: Origin, proxy: RunningProxy, events: ProxyEvent[]) => Promise<void>,
): Promise<void> {
  const origin = await startOrigin();
  const events: ProxyEvent[] = [];
  const proxy = await startProxy({
    mappings: [`0=tcp://127.0.0.1:${origin.server.port}#db`],
    http,
    seed: 3,
    onEvent: (event) => events.push(event),
  });
  try {
    await run(origin, proxy, events);
  } finally {
    await proxy.stop();
    await origin.server.close();
  }
}

for (const http of [false, true]) {
  describe(`a blackhole on a tcp:// mapping (${http ? 'protocol-aware proxy' : 'plain proxy'})`, () => {
    it('dials nothing while on; a client that left is never delivered', async () => {
      await withOriginProxy(http, async (origin, proxy, events) => {
        proxy.setFaults([{ type: 'blackhole' }]);
        const client = await connect(proxy.ports[0]!);
        client.write('ghost');
        await until(() => queued(proxy) >= 5, 'the proxy read what the client sent');
        client.end();
        await waitClose(client);
        await until(() => active(proxy) === 0, 'the proxy saw the client leave');
        assert.equal(origin.accepted.length, 0, 'the origin accepted nothing during the blackhole');
        const close = events.find((e) => e.type === 'close');
        assert.ok(close?.type === 'close' && close.neverDialled === true, JSON.stringify(close));

        proxy.setFaults([]);
        await controlRoundTrip(proxy);
        assert.equal(origin.accepted.length, 1, 'only the control connection reached the origin');
        assert.equal(received(origin), 'control');
        const blackhole = proxy.counters().faults.find((f) => f.type === 'blackhole')!;
        assert.equal(blackhole.applications, 1, 'one connection held, counted once');
        assert.equal(blackhole.connections, 1);
        assert.ok(blackhole.timeHeldMs > 0);
      });
    });

    it('a client still waiting when it ends gets its remote then, and what it sent', async () => {
      await withOriginProxy(http, async (origin, proxy) => {
        proxy.setFaults([{ type: 'blackhole' }]);
        const client = await connect(proxy.ports[0]!);
        client.write('hello');
        await until(() => queued(proxy) >= 5, 'the proxy read what the client sent');
        assert.equal(origin.accepted.length, 0);
        proxy.setFaults([]);
        assert.equal((await readBytes(client, 5)).toString(), 'hello');
        assert.equal(origin.accepted.length, 1);
        assert.equal(received(origin), 'hello');
        client.destroy();
      });
    });

    it('on an open connection nothing more is forwarded, and the bytes of a client that left never are', async () => {
      await withOriginProxy(http, async (origin, proxy) => {
        const client = await connect(proxy.ports[0]!);
        client.write('a');
        assert.equal((await readBytes(client, 1)).toString(), 'a');
        proxy.setFaults([{ type: 'blackhole' }]);
        client.write('ghost');
        await until(() => queued(proxy) >= 5, 'the proxy read what the client sent');
        client.end();
        await until(() => queued(proxy) === 0, 'the proxy dropped the bytes of the client that left');
        assert.equal(origin.accepted[0]!.closed, false, 'the origin sees nothing while the blackhole is on');
        proxy.setFaults([]);
        await until(() => origin.accepted[0]!.closed, 'the origin saw the connection close when the hold ended');
        assert.equal(received(origin), 'a', 'the held bytes were never delivered');
        client.destroy();
      });
    });
  });
}

describe('connection_refused on a tcp:// mapping', () => {
  it('resets each client and never dials the origin', async () => {
    await withOriginProxy(true, async (origin, proxy) => {
      proxy.setHttpFaults([{ type: 'connection_refused' }]);
      for (let i = 0; i < 5; i++) {
        // The reset may come before the client's connect completes (ECONNRESET), as close to a refusal as a proxy gets.
        const client = net.connect({ host: '127.0.0.1', port: proxy.ports[0]! });
        client.on('error', () => {});
        client.write('startup');
        await waitClose(client);
      }
      await until(() => active(proxy) === 0, 'every refused client closed');
      assert.equal(origin.accepted.length, 0, 'a refusal costs the origin nothing');
      assert.equal(proxy.counters().httpFaults![0]!.applications, 5);
      proxy.setHttpFaults([]);
      await controlRoundTrip(proxy);
      assert.equal(origin.accepted.length, 1);
    });
  });
});

const psqlMissing = await new Promise<string | undefined>((resolve) =>
  execFile('psql', ['--version'], { timeout: 5000 }, (error) => resolve(error ? 'psql is not installed' : undefined)),
);

describe('psql behind a blackhole', { skip: psqlMissing }, () => {
  it('a psql that gave up (connect_timeout 2) never reaches the server afterwards', async () => {
    await withOriginProxy(true, async (origin, proxy) => {
      proxy.setFaults([{ type: 'blackhole' }]);
      const dsn =
        `host=127.0.0.1 port=${proxy.ports[0]} dbname=shop user=shop sslmode=disable ` +
        'connect_timeout=2 application_name=ghost';
      const exit = await new Promise<number | null>((resolve) => {
        const child = execFile('psql', [dsn, '-Atc', 'select 1'], { timeout: 60_000 }, () => resolve(child.exitCode));
      });
      assert.notEqual(exit, 0, 'psql gave up');
      await until(() => active(proxy) === 0, 'the proxy saw psql leave');
      proxy.setFaults([]);
      await controlRoundTrip(proxy);
      assert.equal(origin.accepted.length, 1, 'only the control connection reached the server');
      assert.doesNotMatch(received(origin), /ghost/);
    });
  });
});

const noRedis = await redisUnavailable();

describe('a real redis-server behind a blackhole', { skip: noRedis }, () => {
  it('accepts no connection while it is on; a client that left never writes; one still waiting does', async () => {
    const redis = await startRedis();
    const direct = await RespClient.connect(redis.port);
    const proxy = await startProxy({ mappings: [`0=redis://127.0.0.1:${redis.port}#cache`], http: true, seed: 1 });
    const connectionsReceived = async (): Promise<number> =>
      Number(/total_connections_received:(\d+)/.exec(String(await direct.command('INFO', 'stats')))![1]);
    try {
      const before = await connectionsReceived();
      proxy.setFaults([{ type: 'blackhole' }]);
      const ghost = await RespClient.connect(proxy.ports[0]!);
      const lost = ghost.command('SET', 'ghost', 'yes').catch(() => 'lost');
      await until(() => queued(proxy) > 0, 'the proxy read the SET');
      await ghost.close();
      assert.equal(await lost, 'lost');
      await until(() => active(proxy) === 0, 'the proxy saw the client leave');

      const waiting = await RespClient.connect(proxy.ports[0]!);
      const kept = waiting.command('SET', 'kept', 'yes');
      await until(() => queued(proxy) > 0, 'the proxy read the second SET');
      assert.equal(await connectionsReceived(), before, 'redis accepted nothing during the blackhole');
      proxy.setFaults([]);
      assert.equal(await kept, 'OK');
      assert.equal(await connectionsReceived(), before + 1, 'one connection: the client that waited');
      assert.equal(await direct.command('EXISTS', 'ghost'), 0, 'the SET of the client that left never ran');
      assert.equal(await direct.command('GET', 'kept'), 'yes');
      await waiting.close();
    } finally {
      await direct.close();
      await proxy.stop();
      await redis.close();
    }
  });
});
