/**
 * Every mcp-chaos-monkey fault config against a mapping in front of a real redis-server, injected
 * through the admin API as reliable-mcp's scenarios do: each either acts (seen by a real RESP
 * client: redis-cli, or the fixture's client) or is refused with 400 naming the config and the
 * mapping. Also: replies stay in command order among the proxy's own answers, non-RESP streams
 * get the transport-level faults, and a mapping's kind is learned from its traffic.
 */
import assert from 'node:assert/strict';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { FaultRegistry, startAdmin } from '../src/proxy/control/index.js';
import { startProxy, type RunningProxy } from '../src/proxy/index.js';
import { RespFramer } from '../src/proxy/resp/framer.js';
import { RespSession } from '../src/proxy/resp/session.js';
import { ClientEnd, type ClientEndSink } from '../src/proxy/client-end.js';
import { parseMapping } from '../src/proxy/mapping.js';
import { RequestFaultList } from '../src/proxy/requests/fault-list.js';
import {
  connect,
  echo,
  handleCounts,
  readBytes,
  settledHandles,
  startServer,
  waitClose,
} from './fixtures/proxy/net.js';
import {
  RespClient,
  RespErrorReply,
  redisCli,
  redisPipe,
  redisUnavailable,
  startRedis,
  type RedisServer,
} from './fixtures/redis.js';

const TOKEN = 'resp-test-token';
const unavailable = await redisUnavailable();

interface Admin {
  inject(
    target: string,
    config: Record<string, unknown>,
    durationMs?: number,
  ): Promise<{ status: number; json: Record<string, unknown> }>;
  requestCount(id: string): Promise<number>;
  clearAll(): Promise<void>;
}

/** A protocol-aware proxy with `mappings`, its admin API, torn down after `body` with no handle left. */
async function withAdmin(
  mappings: string[],
  body: (admin: Admin, proxy: RunningProxy) => Promise<void>,
): Promise<void> {
  const baseline = handleCounts();
  const proxy = await startProxy({ mappings, http: true, seed: 7 });
  const registry = new FaultRegistry(proxy);
  const server = await startAdmin({ host: '127.0.0.1', port: 0, token: TOKEN, registry });
  const call = async (path: string, payload?: unknown, method = 'POST') => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(payload ? { body: JSON.stringify(payload) } : {}),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const admin: Admin = {
    inject: (target, config, durationMs) =>
      call('/chaos/inject', { target, config, ...(durationMs !== undefined ? { durationMs } : {}) }),
    async requestCount(id) {
      const faults = (await call('/chaos/status', undefined, 'GET')).json['faults'] as Array<{
        id: string;
        requestCount: number;
      }>;
      return faults.find((fault) => fault.id === id)!.requestCount;
    },
    async clearAll() {
      assert.equal((await call('/chaos/clear-all', {})).status, 200);
    },
  };
  try {
    await body(admin, proxy);
  } finally {
    await server.close();
    registry.dispose();
    await proxy.stop();
  }
  assert.deepEqual(await settledHandles(baseline), baseline);
}

/** Waits until `check` holds (polling; 20 s at most, a bound no loaded machine reaches). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (!check()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function injected(admin: Admin, target: string, config: Record<string, unknown>): Promise<string> {
  const answer = await admin.inject(target, config);
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return answer.json['faultId'] as string;
}

describe('RESP faults against a real redis-server', { skip: unavailable }, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.close();
  });

  it("replays reliable-mcp's Redis scenarios: connection-refused, then latency, acting on every command", async () => {
    await withAdmin([`0=redis://127.0.0.1:${redis.port}#redis`], async (admin, proxy) => {
      const port = proxy.ports[0]!;
      assert.equal((await redisCli(port, ['SET', 'city', 'Paris'])).stdout.trim(), 'OK');

      const refused = await injected(admin, 'redis', { type: 'connection-refused' });
      const cli = await redisCli(port, ['GET', 'city']);
      assert.notEqual(cli.stdout.trim(), 'Paris', 'the command must not be answered');
      assert.match(`${cli.stdout}${cli.stderr}`, /reset|closed|error/i);
      assert.ok((await admin.requestCount(refused)) >= 1);
      await admin.clearAll();

      const latency = await injected(admin, 'redis', { type: 'latency', delayMs: 300 });
      const client = await RespClient.connect(port);
      const started = performance.now();
      assert.equal(await client.command('GET', 'city'), 'Paris');
      assert.ok(performance.now() - started >= 300, 'the reply came before the delay');
      assert.deepEqual(await client.pipeline([['GET', 'city'], ['PING']]), ['Paris', 'PONG']);
      assert.equal(await admin.requestCount(latency), 3, 'one application per command');
      await client.close();
    });
  });

  it('error answers each command with a RESP error and never reaches Redis; with forward it does', async () => {
    await withAdmin([`0=redis://127.0.0.1:${redis.port}#redis`], async (admin, proxy) => {
      const port = proxy.ports[0]!;
      const id = await injected(admin, 'redis', { type: 'error', statusCode: 503, message: 'connection lost' });
      const cli = await redisCli(port, ['SET', 'written', 'yes']);
      assert.match(cli.stdout, /ERR connection lost/);
      assert.equal(await admin.requestCount(id), 1);
      await admin.clearAll();
      assert.equal((await redisCli(port, ['EXISTS', 'written'])).stdout.trim(), '0', 'the SET never reached Redis');

      await injected(admin, 'redis', { type: 'error', statusCode: 500, forward: true });
      assert.match((await redisCli(port, ['SET', 'written', 'yes'])).stdout, /ERR faultline injected error/);
      await admin.clearAll();
      assert.equal(
        (await redisCli(port, ['GET', 'written'])).stdout.trim(),
        'yes',
        'forwarded, then its reply replaced',
      );
    });
  });

  it('keeps replies in command order among its own answers (a pipeline, a fault on SET only)', async () => {
    await withAdmin([`0=redis://127.0.0.1:${redis.port}#redis`], async (admin, proxy) => {
      await injected(admin, 'redis', {
        type: 'error',
        statusCode: 500,
        method: 'SET',
        message: 'READONLY You cannot write',
      });
      const client = await RespClient.connect(proxy.ports[0]!);
      const replies = await client.pipeline([
        ['DEL', 'k'],
        ['SET', 'k', '1'],
        ['GET', 'k'],
        ['INCR', 'n'],
        ['SET', 'k', '2'],
        ['PING'],
      ]);
      assert.equal(typeof replies[0], 'number');
      assert.ok(
        replies[1] instanceof RespErrorReply && replies[1].message === 'READONLY You cannot write',
        String(replies[1]),
      );
      assert.equal(replies[2], null);
      assert.equal(typeof replies[3], 'number');
      assert.ok(replies[4] instanceof RespErrorReply);
      assert.equal(replies[5], 'PONG');
      await client.close();
    });
  });

  it('timeout holds a command hangMs then answers an error; connection-drop cuts the connection', async () => {
    await withAdmin([`0=redis://127.0.0.1:${redis.port}#redis`], async (admin, proxy) => {
      const port = proxy.ports[0]!;
      await injected(admin, 'redis', { type: 'timeout', hangMs: 250 });
      const client = await RespClient.connect(port);
      const started = performance.now();
      const reply = await client.command('GET', 'city');
      assert.ok(reply instanceof RespErrorReply && /timeout/.test(reply.message), String(reply));
      assert.ok(performance.now() - started >= 250);
      await client.close();
      await admin.clearAll();

      await injected(admin, 'redis', { type: 'connection-drop', afterMs: 100 });
      const dropped = await RespClient.connect(port);
      await assert.rejects(dropped.command('PING'), /closed/);
      await dropped.close();
      await admin.clearAll();

      // Without afterMs the command is executed and its reply lost with the connection.
      await injected(admin, 'redis', { type: 'connection-drop' });
      const cut = await RespClient.connect(port);
      await assert.rejects(cut.command('SET', 'dropped', 'executed'), /closed/);
      await cut.close();
      await admin.clearAll();
      assert.equal((await redisCli(port, ['GET', 'dropped'])).stdout.trim(), 'executed');
    });
  });

  it('refuses with 400, naming the config and the mapping, what Redis cannot express', async () => {
    await withAdmin([`0=redis://127.0.0.1:${redis.port}#redis`], async (admin) => {
      for (const config of [
        { type: 'rate-limit', retryAfterSeconds: 5 },
        { type: 'malformed', corruptResponse: true },
        { type: 'schema-mismatch', missingFields: ['a'] },
        { type: 'latency', delayMs: 10, path: '/x' },
      ]) {
        const answer = await admin.inject('redis', config);
        assert.equal(answer.status, 400, `${JSON.stringify(config)} → ${answer.status}`);
        const error = String(answer.json['error']);
        assert.ok(error.includes(config.type), error);
        assert.ok(error.includes('#redis') && error.includes('Redis'), error);
      }
    });
  });

  it('a blackhole counts each command it holds; every reply follows once it ends (redis-cli --pipe)', async () => {
    await withAdmin([`0=redis://127.0.0.1:${redis.port}#redis`], async (_admin, proxy) => {
      const commands = (): number => proxy.counters().mappings[0]!.respCommands ?? 0;
      const cli = redisPipe(proxy.ports[0]!);
      cli.send('DEL', 'held');
      await until(() => commands() === 1, 'the first command reaches the proxy');
      proxy.setFaults([{ type: 'blackhole' }]);
      // A pipelining client keeps writing behind the held link: each command is read and counted, none goes on.
      for (let index = 0; index < 50; index++) cli.send('INCR', 'held');
      await until(() => commands() === 51, 'the proxy reads every command while it holds them');
      const [held] = proxy.counters().faults;
      assert.equal(held!.respCommands, 50, JSON.stringify(held));
      assert.equal(held!.httpExchanges, undefined);
      assert.equal((await redisCli(redis.port, ['GET', 'held'])).stdout.trim(), '', 'no INCR reached Redis');
      proxy.setFaults([]);
      const done = await cli.end();
      assert.equal(done.errors, 0, done.output);
      assert.ok(done.replies !== undefined && done.replies >= 51, done.output);
      assert.equal((await redisCli(redis.port, ['GET', 'held'])).stdout.trim(), '50', 'held, not lost');
      assert.equal(proxy.counters().faults[0]!.respCommands, 50, 'counted while the fault was set only');
    });
  });

  it('learns that an undeclared mapping carries Redis from its first connection', async () => {
    await withAdmin([`0=127.0.0.1:${redis.port}#cache`], async (admin, proxy) => {
      // Unknown before any traffic (the port is not 6379): accepted, since an HTTP client might come.
      const early = await injected(admin, 'cache', { type: 'rate-limit', retryAfterSeconds: 1 });
      assert.equal((await redisCli(proxy.ports[0]!, ['PING'])).stdout.trim(), 'PONG');
      assert.equal(await admin.requestCount(early), 0, 'it could not act on Redis, and says so');
      const refused = await admin.inject('cache', { type: 'rate-limit', retryAfterSeconds: 1 });
      assert.equal(refused.status, 400, JSON.stringify(refused.json));
      assert.match(
        String(refused.json['error']),
        /^config: the fault \{"type":"rate-limit","target":"cache"\} cannot act on its mapping/,
      );
      // The fault accepted earlier does not block what can act.
      const latency = await injected(admin, 'cache', { type: 'latency', delayMs: 1 });
      assert.equal((await redisCli(proxy.ports[0]!, ['PING'])).stdout.trim(), 'PONG');
      assert.equal(await admin.requestCount(latency), 1);
    });
  });
});

describe('request faults on an opaque TCP stream', () => {
  it('latency delays each message, connection-refused resets, error is refused once the stream is known', async () => {
    const server = await startServer(echo);
    try {
      await withAdmin([`0=tcp://127.0.0.1:${server.port}#stream`], async (admin, proxy) => {
        const port = proxy.ports[0]!;
        const socket = await connect(port);
        socket.write(Buffer.from([0x16, 0x03, 0x01]));
        assert.deepEqual(await readBytes(socket, 3), Buffer.from([0x16, 0x03, 0x01]));
        const latency = await injected(admin, 'stream', { type: 'latency', delayMs: 200 });
        const started = performance.now();
        socket.write(Buffer.from([1, 2]));
        assert.deepEqual(await readBytes(socket, 2), Buffer.from([1, 2]));
        assert.ok(performance.now() - started >= 200);
        assert.equal(await admin.requestCount(latency), 1);
        await admin.clearAll();

        await injected(admin, 'stream', { type: 'connection-refused' });
        socket.write(Buffer.from([3]));
        await waitClose(socket);
        await admin.clearAll();

        const refused = await admin.inject('stream', { type: 'error', statusCode: 503 });
        assert.equal(refused.status, 400);
        assert.match(String(refused.json['error']), /opaque TCP stream/);
      });
    } finally {
      await server.close();
    }
  });
});

describe('RESP framer', () => {
  it('finds value ends across any chunking, RESP3 types, attributes and pushes', () => {
    const stream = Buffer.from(
      '+OK\r\n-ERR x\r\n:12\r\n$5\r\nhe\r\nl\r\n$-1\r\n*2\r\n$1\r\na\r\n*1\r\n:1\r\n%1\r\n+k\r\n+v\r\n' +
        '|1\r\n+ttl\r\n:3\r\n+annotated\r\n>2\r\n+message\r\n+hi\r\n_\r\n,1.5\r\n#t\r\n=7\r\ntxt:abc\r\n*0\r\n',
    );
    const expected = [
      '+OK',
      '-ERR x',
      ':12',
      '$5 bulk',
      '$-1',
      '*2',
      '%1',
      '|+annotated',
      '>2',
      '_',
      ',1.5',
      '#t',
      '=7',
      '*0',
    ].length;
    for (const size of [1, 2, 3, 7, stream.length]) {
      const framer = new RespFramer('replies');
      const ends: Array<{ at: number; push: boolean }> = [];
      let offset = 0;
      for (let at = 0; at < stream.length; at += size) {
        const chunk = stream.subarray(at, at + size);
        framer.feed(chunk, (value) => ends.push({ at: offset + value.end, push: value.push }));
        offset += chunk.length;
      }
      assert.equal(ends.length, expected, `chunks of ${size}`);
      assert.equal(ends.at(-1)!.at, stream.length);
      assert.deepEqual(
        ends.map((end) => end.push),
        ends.map((_, i) => i === 8),
      );
      assert.equal(framer.inValue, false);
    }
  });

  it('reads command names from arrays and inline commands, and refuses what is not RESP', () => {
    const framer = new RespFramer('commands');
    const names: string[][] = [];
    framer.feed(Buffer.from('*3\r\n$6\r\nclient\r\n$5\r\nreply\r\n$3\r\nOFF\r\nping\r\n\r\nset k v\n'), (value) =>
      names.push([...value.words]),
    );
    assert.deepEqual(names, [['CLIENT', 'reply'], ['PING'], ['SET', 'k']]);
    assert.throws(() => new RespFramer('replies').feed(Buffer.from('HTTP/1.1 200 OK\r\n'), () => {}), /not RESP/);
    assert.throws(() => new RespFramer('commands').feed(Buffer.from('*1\r\n*1\r\n'), () => {}), /nested/);
  });
});

describe('RESP session writes', () => {
  it('sends a pipeline read in one chunk to Redis in one write, and its replies to the client in one', async () => {
    let accepted: ((socket: net.Socket) => void) | undefined;
    const server = await startServer((socket) => accepted?.(socket));
    const serverSide = new Promise<net.Socket>((resolve) => (accepted = resolve));
    const client = await connect(server.port);
    const socket = await serverSide;
    const mapping = parseMapping(`0=redis://127.0.0.1:${server.port}`);
    const faults = new RequestFaultList({
      mappings: [mapping],
      seed: 1,
      ports: () => [server.port],
      kindsOf: () => new Set(['resp'] as const),
    });
    const upstreamChunks: Buffer[] = [];
    let sink: ClientEndSink | undefined;
    const session = new RespSession({
      socket,
      index: 0,
      faults,
      clock: () => performance.now(),
      openUpstream: (given) => {
        sink = given;
        const end = new ClientEnd(given, undefined, undefined);
        end.on('data', (data: Buffer) => upstreamChunks.push(data));
        end.resume();
        return end;
      },
      countCommand: () => {},
    });
    session.start();
    // What the client socket hands the kernel: one _write or _writev call is one write.
    let writes = 0;
    const spied = socket as net.Socket & {
      _write: (...args: unknown[]) => void;
      _writev: (...args: unknown[]) => void;
    };
    for (const method of ['_write', '_writev'] as const) {
      const original = spied[method].bind(spied);
      spied[method] = (...args: unknown[]) => {
        writes++;
        original(...args);
      };
    }
    try {
      const pipeline = '*1\r\n$4\r\nPING\r\n'.repeat(16);
      client.write(pipeline);
      while (upstreamChunks.reduce((sum, chunk) => sum + chunk.length, 0) < pipeline.length)
        await new Promise((resolve) => setImmediate(resolve));
      assert.equal(upstreamChunks.length, 1, 'the 16 commands in one push towards Redis');
      assert.equal(Buffer.concat(upstreamChunks).toString(), pipeline);
      sink!.write(Buffer.from('+PONG\r\n'.repeat(16)));
      assert.equal((await readBytes(client, 7 * 16)).toString(), '+PONG\r\n'.repeat(16));
      assert.equal(writes, 1, 'the 16 replies in one write to the client');
    } finally {
      client.destroy();
      socket.destroy();
      await server.close();
    }
  });
});
