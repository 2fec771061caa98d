/**
 * A fault added to a running proxy reaches the connections already open. With no fault a link writes each
 * chunk straight through (src/proxy/link.ts: no stage, no queue, no clock); a fault added live through any
 * door must take such a link off that path from its next chunk. Each door is driven as its users drive it:
 * the Toxiproxy API (toxiproxy-node-client's routes), the admin API, and the hosted proxy a scenario runs.
 */
import assert from 'node:assert/strict';
import type net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startAdmin, FaultRegistry } from '../src/proxy/control/index.js';
import { startProxy } from '../src/proxy/index.js';
import { startHostedProxy } from '../src/proxy-host/index.js';
import { startToxiproxyServer } from '../src/toxiproxy/server.js';
import { connect, destroyAndWait, echo, readBytes, startServer, type TestServer } from './fixtures/proxy/net.js';

const LIMIT = 50;
const SENT = 300;
const TOKEN = 'live-faults-token';

let upstream: TestServer;

before(async () => {
  upstream = await startServer(echo);
});

after(async () => {
  await upstream.close();
});

/** Echoes one word through `socket`: the link is in use, on its no-fault path. */
async function roundTrip(socket: net.Socket): Promise<void> {
  socket.write('ping');
  assert.equal((await readBytes(socket, 4)).toString(), 'ping');
}

/**
 * Sends SENT bytes to the echo and reads what comes back until the stream ends: LIMIT bytes then the end when
 * the limit_data added live applies. More than LIMIT bytes means the open link kept writing past the fault
 * (it stayed on the no-fault path), and that is answered at once rather than by waiting for an end.
 */
function echoedAfterLimit(socket: net.Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = 0;
    socket.on('data', (data: Buffer) => {
      received += data.length;
      if (received > LIMIT) resolve(received);
    });
    socket.once('end', () => resolve(received));
    socket.once('error', reject);
    socket.resume();
    socket.write(Buffer.alloc(SENT, 7));
  });
}

describe('a fault added live reaches a connection already open on the no-fault path', () => {
  it('through the Toxiproxy API', async () => {
    const api = await startToxiproxyServer({ host: '127.0.0.1', port: 0, policy: {}, seed: 7 });
    try {
      const created = await fetch(`${api.url}/proxies`, {
        method: 'POST',
        body: JSON.stringify({ name: 'live', listen: '127.0.0.1:0', upstream: `127.0.0.1:${upstream.port}` }),
      });
      const { listen } = (await created.json()) as { listen: string };
      const socket = await connect(Number(listen.slice(listen.lastIndexOf(':') + 1)));
      await roundTrip(socket);
      const added = await fetch(`${api.url}/proxies/live/toxics`, {
        method: 'POST',
        body: JSON.stringify({ type: 'limit_data', attributes: { bytes: LIMIT } }),
      });
      assert.equal(added.status, 200, await added.text());
      assert.equal(await echoedAfterLimit(socket), LIMIT);
      await destroyAndWait(socket);
    } finally {
      await api.close();
    }
  });

  it('through the admin API, on a TCP mapping', async () => {
    const proxy = await startProxy({ mappings: [`0=127.0.0.1:${upstream.port}#echo`], seed: 3 });
    const registry = new FaultRegistry(proxy);
    const admin = await startAdmin({ host: '127.0.0.1', port: 0, token: TOKEN, registry });
    try {
      const socket = await connect(proxy.ports[0]!);
      await roundTrip(socket);
      const injected = await fetch(`${admin.url}/chaos/inject`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'echo', config: { type: 'limit_data', bytes: LIMIT } }),
      });
      assert.equal(injected.status, 200, await injected.text());
      assert.equal(await echoedAfterLimit(socket), LIMIT);
      await destroyAndWait(socket);
    } finally {
      await admin.close();
      registry.dispose();
      await proxy.stop();
    }
  });

  it('on the hosted proxy a scenario runs: a latency counts every word after it, both ways', async () => {
    const proxy = await startHostedProxy({ mappings: [`0=127.0.0.1:${upstream.port}#echo`], faults: [] });
    try {
      const socket = await connect(proxy.ports[0]!);
      await roundTrip(socket);
      const { id } = await proxy.inject('echo', { type: 'latency', latencyMs: 1, direction: 'both' });
      for (let word = 0; word < 3; word++) await roundTrip(socket);
      const latency = (await proxy.counters()).faults.find((fault) => fault.name === id)!;
      assert.ok(latency.applications >= 6, `${latency.applications} delays: 3 words, each both ways`);
      assert.equal(latency.connections, 1, 'the connection open before the fault');
      await proxy.clear(id);
      await roundTrip(socket);
      await proxy.inject('echo', { type: 'limit_data', bytes: LIMIT });
      assert.equal(await echoedAfterLimit(socket), LIMIT);
      await destroyAndWait(socket);
    } finally {
      await proxy.stop();
    }
  });
});
