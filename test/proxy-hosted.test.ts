/**
 * The fault proxy hosted on a thread of its own (src/proxy-host/), as scenarios and experiments run it: RESP
 * faults act through it on a real redis-server, refusals and failures cross the thread as the
 * class they were thrown as, and a stop leaves nothing open on that thread. The proxy's own tests
 * (every network fault, the HTTP stage and its faults, framing, integrity, latency) run against it
 * too, in their own files, once per placement (test/helpers/proxy-under-test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InputError } from '../src/kernel/errors.js';
import type { ProxyEvent } from '../src/proxy/index.js';
import { proxyThreadResources, startHostedProxy } from '../src/proxy-host/index.js';
import { proxyThread } from '../src/proxy-host/thread.js';
import { connect, destroyAndWait, echo, readBytes, startServer, waitClose } from './fixtures/proxy/net.js';
import { redisCli, redisUnavailable, startRedis, type RedisServer } from './fixtures/redis.js';

/**
 * Sockets, listening servers and timers alive on the proxy thread, once they have settled: a
 * closed handle leaves the list on a later turn of that thread's loop, so this polls (up to 2 s).
 */
async function threadHandles(): Promise<string[]> {
  let alive: string[] = [];
  for (let waited = 0; waited <= 2_000; waited += 20) {
    alive = (await proxyThreadResources()).filter(
      (resource) => resource === 'TCPServerWrap' || resource === 'TCPSocketWrap' || resource === 'Timeout',
    );
    if (alive.length === 0) return alive;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return alive;
}

describe('across the thread boundary', () => {
  it('a refused fault comes back as an InputError naming the field, and changes nothing', async () => {
    const server = await startServer(echo);
    await assert.rejects(
      startHostedProxy({
        mappings: [`0=127.0.0.1:${server.port}`],
        faults: [{ type: 'latency', latencyMs: -1 } as never],
      }),
      (error: unknown) => {
        assert.ok(error instanceof InputError, String(error));
        assert.match((error as Error).message, /latency/);
        return true;
      },
    );
    const proxy = await startHostedProxy({
      mappings: [`0=127.0.0.1:${server.port}`],
      faults: [{ type: 'latency', latencyMs: 5, name: 'kept' }],
    });
    try {
      await assert.rejects(proxy.setFaults([{ type: 'teapot' } as never]), InputError);
      await assert.rejects(proxy.setHttpFaults([{ type: 'error' }]), /HTTP/);
      const counters = await proxy.counters();
      assert.deepEqual(
        counters.faults.filter((fault) => fault.active).map((fault) => fault.name),
        ['kept'],
      );
    } finally {
      await proxy.stop();
      await server.close();
    }
  });

  it('a port already bound fails the start, naming the mapping, and leaves nothing open', async () => {
    const server = await startServer(echo);
    const first = await startHostedProxy({ mappings: [`0=127.0.0.1:${server.port}`] });
    try {
      await assert.rejects(
        startHostedProxy({ mappings: [`${first.ports[0]}=127.0.0.1:${server.port}`] }),
        new RegExp(String(first.ports[0])),
      );
    } finally {
      await first.stop();
      await server.close();
    }
    assert.deepEqual(await threadHandles(), []);
  });

  it(
    'events come back to onEvent; a stop closes every connection, ' + 'twice is harmless, later calls are refused',
    async () => {
      const server = await startServer(echo);
      const events: ProxyEvent[] = [];
      const proxy = await startHostedProxy({
        mappings: [`0=127.0.0.1:${server.port}`],
        faults: [{ type: 'blackhole' }],
        onEvent: (event) => events.push(event),
      });
      const client = await connect(proxy.ports[0]!);
      client.write('held');
      // Under a blackhole the remote is never dialled: the connection is counted, and no 'open' comes.
      for (let waited = 0; (await proxy.counters()).mappings[0]!.activeConnections === 0; waited += 5) {
        assert.ok(waited < 10_000, 'the connection was not accepted within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(server.sockets.size, 0, 'the remote was not dialled');
      assert.ok(!events.some((event) => event.type === 'open'), JSON.stringify(events));
      const closed = waitClose(client);
      await Promise.all([proxy.stop(), proxy.stop()]);
      await closed;
      await assert.rejects(proxy.counters(), /stopped/);
      await server.close();
      assert.deepEqual(await threadHandles(), []);
    },
  );

  it(
    'a proxy thread that dies fails the calls in progress, its ' +
      'proxies stop at once, and the next start gets a new thread',
    async () => {
      const server = await startServer(echo);
      const proxy = await startHostedProxy({ mappings: [`0=127.0.0.1:${server.port}`] });
      const dying = proxyThread();
      // The thread's worker, as a crash would end it (no API ends it on purpose).
      await (dying as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      await assert.rejects(proxy.counters(), /proxy thread exited/);
      await proxy.stop(); // resolves: the proxy went with its thread
      assert.ok(dying.gone);
      const next = await startHostedProxy({ mappings: [`0=127.0.0.1:${server.port}`] });
      try {
        assert.notEqual(proxyThread(), dying);
        const client = await connect(next.ports[0]!);
        client.write('ping');
        assert.equal((await readBytes(client, 4)).toString(), 'ping');
        await destroyAndWait(client);
        assert.equal((await next.counters()).mappings[0]!.connections, 1);
      } finally {
        await next.stop();
        await server.close();
      }
      assert.deepEqual(await threadHandles(), []);
    },
  );
});

describe('faults injected one by one, kept by a registry on the thread (as an experiment sets them)', () => {
  it('inject answers the id and the counters as it went on; clear retires it; a bad config is refused', async () => {
    const server = await startServer(echo);
    const proxy = await startHostedProxy({ mappings: [`0=127.0.0.1:${server.port}#api`] });
    try {
      await assert.rejects(proxy.inject('#nowhere', { type: 'latency', latencyMs: 5 }), /names no mapping/);
      await assert.rejects(proxy.inject('#api', { type: 'latency', latencyMs: -1 }), InputError);
      const { id, counters } = await proxy.inject('#api', { type: 'latency', latencyMs: 5 });
      assert.deepEqual(
        counters.faults.map((fault) => [fault.name, fault.active]),
        [[id, true]],
      );
      const client = await connect(proxy.ports[0]!);
      client.write('ping');
      assert.equal((await readBytes(client, 4)).toString(), 'ping');
      await destroyAndWait(client);
      assert.equal(await proxy.clear(id), true);
      assert.equal(await proxy.clear(id), false, 'cleared already');
      const after = (await proxy.counters()).faults.find((fault) => fault.name === id)!;
      assert.equal(after.active, false);
      assert.ok(after.applications > 0, 'the delay it added is still counted');
      await proxy.inject('#api', { type: 'blackhole' });
      await proxy.clearAll();
      assert.deepEqual(
        (await proxy.counters()).faults.filter((fault) => fault.active),
        [],
      );
    } finally {
      await proxy.stop();
      await server.close();
    }
    assert.deepEqual(await threadHandles(), []);
  });
});

describe('RESP faults through the proxy on its thread, against a real redis-server', {
  skip: await redisUnavailable(),
}, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.close();
  });

  it('an error fault answers the command and never reaches Redis; cleared, commands pass again', async () => {
    const proxy = await startHostedProxy({
      mappings: [`0=redis://127.0.0.1:${redis.port}#redis`],
      http: true,
      seed: 7,
    });
    try {
      const port = proxy.ports[0]!;
      await proxy.setHttpFaults([{ type: 'error', statusCode: 503, message: 'connection lost', target: '#redis' }]);
      assert.match((await redisCli(port, ['SET', 'hosted', 'yes'])).stdout, /ERR connection lost/);
      assert.equal((await proxy.counters()).httpFaults![0]!.applications, 1);
      await proxy.setHttpFaults([]);
      assert.equal((await redisCli(port, ['EXISTS', 'hosted'])).stdout.trim(), '0', 'the SET reached Redis');
      assert.equal((await proxy.counters()).mappings[0]!.respCommands, 2);
    } finally {
      await proxy.stop();
    }
    assert.deepEqual(await threadHandles(), []);
  });
});
