/**
 * A user's Redis test through faultline's Toxiproxy API, as it is written against Toxiproxy:
 * toxiproxy-node-client puts a proxy in front of a real redis-server, then a `timeout 0` toxic
 * makes commands hang until it is removed (which closes the held connection), and a
 * `limit_data` toxic cuts a large reply short. The proxy is opaque TCP: redis-cli's first
 * command goes through from the first byte.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer, type ToxiproxyServer } from '../src/toxiproxy/server.js';
import { RespClient, redisCli, redisUnavailable, startRedis, type RedisServer } from './fixtures/redis.js';

const unavailable = await redisUnavailable();

describe('redis-server behind a Toxiproxy proxy', { skip: unavailable }, () => {
  let redis: RedisServer;
  let api: ToxiproxyServer;
  let client: Toxiproxy;
  let port: number;

  before(async () => {
    redis = await startRedis();
    api = await startToxiproxyServer({ host: '127.0.0.1', port: 0, policy: {} });
    client = new Toxiproxy(api.url);
    const proxy = await client.createProxy({
      name: 'redis',
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${redis.port}`,
    });
    port = Number(proxy.listen.split(':')[1]);
  });

  after(async () => {
    await api?.close();
    await redis?.close();
  });

  it('passes commands with no toxic (redis-cli)', async () => {
    const set = await redisCli(port, ['SET', 'k', 'v']);
    assert.equal(set.stdout.trim(), 'OK');
    assert.equal((await redisCli(port, ['GET', 'k'])).stdout.trim(), 'v');
  });

  it('timeout 0: a command hangs until the toxic is removed, which closes the connection', async () => {
    const redisClient = await RespClient.connect(port);
    assert.equal(await redisClient.command('PING'), 'PONG');
    const proxy = await client.get('redis');
    const toxic = await proxy.addToxic({
      name: 'hang',
      type: 'timeout',
      stream: 'downstream',
      toxicity: 1,
      attributes: { timeout: 0 },
    });
    let settled = false;
    const reply = redisClient.command('PING').then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(settled, false, 'the reply is held');
    await toxic.remove();
    await reply;
    assert.equal(settled, true, 'removing the toxic ends the held connection');
    const fresh = await RespClient.connect(port);
    assert.equal(await fresh.command('PING'), 'PONG');
    await fresh.close();
  });

  it('limit_data: a large reply is cut after N bytes', async () => {
    const value = 'x'.repeat(10_000);
    assert.equal((await redisCli(port, ['SET', 'big', value])).stdout.trim(), 'OK');
    const proxy = await client.get('redis');
    const toxic = await proxy.addToxic({
      name: 'cut',
      type: 'limit_data',
      stream: 'downstream',
      toxicity: 1,
      attributes: { bytes: 1000 },
    });
    const cut = await redisCli(port, ['GET', 'big']);
    assert.notEqual(cut.stdout.trim(), value, 'the reply did not arrive whole');
    const counters = api.collection.get('redis').counters()!;
    assert.ok(
      counters.faults.some((fault) => fault.name === 'cut' && fault.applications > 0),
      'the counters prove the cut',
    );
    await toxic.remove();
    assert.equal((await redisCli(port, ['GET', 'big'])).stdout.trim(), value);
  });
});
