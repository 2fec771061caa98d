/** The proxy on real loopback sockets: passthrough, ports, IPv6, TLS origination, failures, stop(). */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { InputError } from '../src/kernel/errors.js';
import type { ProxyEvent } from '../src/proxy/index.js';
import { forEachPlacement } from './helpers/proxy-under-test.js';
import {
  connect,
  destroyAndWait,
  echo,
  handleCounts,
  readBytes,
  readToEnd,
  settledHandles,
  startServer,
  TLS_CERT,
  waitClose,
  writeAll,
} from './fixtures/proxy/net.js';
import { freePort as closedPort } from '../src/proxy/ephemeral-ports.js';

forEachPlacement((startProxy) => {
  describe('proxy on loopback', () => {
    it('passes bytes both ways unchanged, counts them, and leaves no handle after stop()', async () => {
      const baseline = handleCounts();
      const server = await startServer(echo);
      const events: ProxyEvent[] = [];
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`], onEvent: (e) => events.push(e) });
      const client = await connect(proxy.ports[0]!);
      const data = randomBytes(3 * 1024 * 1024);
      const received = readToEnd(client);
      await writeAll(client, data);
      assert.ok((await received).equals(data));
      await waitClose(client);
      const counters = await proxy.counters();
      assert.equal(counters.mappings[0]!.bytesUpstream, data.length);
      assert.equal(counters.mappings[0]!.bytesDownstream, data.length);
      assert.equal(counters.mappings[0]!.connections, 1);
      await proxy.stop();
      await server.close();
      assert.deepEqual(
        events.map((e) => e.type),
        ['open', 'close'],
      );
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('runs two proxies at once on distinct ephemeral ports', async () => {
      const baseline = handleCounts();
      const server = await startServer(echo);
      const first = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`] });
      const second = await startProxy({
        mappings: [`127.0.0.1:0=127.0.0.1:${server.port}`, `0=127.0.0.1:${server.port}`],
      });
      const ports = [...first.ports, ...second.ports];
      assert.equal(new Set(ports).size, 3);
      for (const port of ports) {
        assert.ok(port > 0);
        const client = await connect(port);
        client.write(`hello ${port}`);
        assert.equal((await readBytes(client, `hello ${port}`.length)).toString(), `hello ${port}`);
        await destroyAndWait(client);
      }
      await Promise.all([first.stop(), second.stop()]);
      await server.close();
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('listens and dials over IPv6 loopback', async () => {
      const baseline = handleCounts();
      const server = await startServer(echo, { host: '::1' });
      const proxy = await startProxy({ mappings: [`[::1]:0=[::1]:${server.port}`] });
      const client = await connect(proxy.ports[0]!, '::1');
      client.write('over v6');
      assert.equal((await readBytes(client, 7)).toString(), 'over v6');
      const [accepted] = [...server.sockets];
      assert.equal(accepted!.remoteAddress, '::1');
      await destroyAndWait(client);
      await proxy.stop();
      await server.close();
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('originates TLS to the target, verifying it against the configured trust', async () => {
      const baseline = handleCounts();
      const server = await startServer(echo, { tls: true });
      const events: ProxyEvent[] = [];
      const trusted = await startProxy({
        mappings: [`0=tls://localhost:${server.port}`, `0=https://127.0.0.1:${server.port}`],
        tls: { ca: TLS_CERT },
      });
      for (const port of trusted.ports) {
        const client = await connect(port);
        client.write('plain in, TLS out');
        assert.equal((await readBytes(client, 17)).toString(), 'plain in, TLS out');
        await destroyAndWait(client);
      }
      await trusted.stop();

      // Default trust does not know the self-signed certificate: the handshake fails, is counted and
      // closes the client, and the proxy keeps serving.
      const untrusted = await startProxy({
        mappings: [`0=tls://localhost:${server.port}`],
        onEvent: (e) => events.push(e),
      });
      for (let attempt = 0; attempt < 2; attempt++) {
        const client = await connect(untrusted.ports[0]!);
        await waitClose(client);
      }
      assert.equal((await untrusted.counters()).mappings[0]!.connectFailures, 2);
      const failure = events.find((e) => e.type === 'connect_failed');
      assert.ok(
        failure && failure.type === 'connect_failed' && /self-signed|SELF_SIGNED/i.test(failure.error),
        JSON.stringify(failure),
      );
      await untrusted.stop();

      const insecure = await startProxy({
        mappings: [`0=tls://localhost:${server.port}`],
        tls: { rejectUnauthorized: false },
      });
      const client = await connect(insecure.ports[0]!);
      client.write('ok');
      assert.equal((await readBytes(client, 2)).toString(), 'ok');
      await destroyAndWait(client);
      await insecure.stop();
      await server.close();
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('rejects a port already in use with an error naming the mapping, and leaks nothing', async () => {
      const baseline = handleCounts();
      const server = await startServer(echo);
      const mapping = `127.0.0.1:${server.port}=127.0.0.1:1`;
      await assert.rejects(
        startProxy({ mappings: ['0=127.0.0.1:1', mapping] }),
        (error: unknown) =>
          error instanceof InputError &&
          error.message.includes(JSON.stringify(mapping)) &&
          /already in use \(EADDRINUSE\)/.test(error.message),
      );
      await server.close();
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('closes a client whose target is unreachable, counts it and keeps running', async () => {
      const baseline = handleCounts();
      const server = await startServer(echo);
      const events: ProxyEvent[] = [];
      const proxy = await startProxy({
        mappings: [`0=127.0.0.1:${await closedPort()}`, `0=127.0.0.1:${server.port}`],
        onEvent: (e) => events.push(e),
      });
      const refused = await connect(proxy.ports[0]!);
      refused.write('lost?');
      await waitClose(refused);
      const counters = (await proxy.counters()).mappings[0]!;
      assert.equal(counters.connectFailures, 1);
      assert.equal(counters.activeConnections, 0);
      assert.ok(events.some((e) => e.type === 'connect_failed' && /ECONNREFUSED/.test(e.error)));
      const client = await connect(proxy.ports[1]!);
      client.write('still here');
      assert.equal((await readBytes(client, 10)).toString(), 'still here');
      await destroyAndWait(client);
      await proxy.stop();
      await server.close();
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('stop() closes connections held by a blackhole and pending dials, leaving no handle', async () => {
      const baseline = handleCounts();
      const server = await startServer(echo);
      const proxy = await startProxy({
        mappings: [`0=127.0.0.1:${server.port}`],
        faults: [
          { type: 'blackhole', direction: 'both' },
          { type: 'latency', latencyMs: 5000, name: 'slow' },
        ],
      });
      const clients = await Promise.all([connect(proxy.ports[0]!), connect(proxy.ports[0]!)]);
      for (const client of clients) client.write(randomBytes(256 * 1024));
      // Until the proxy has accepted both (a fixed 100 ms lost that race beside two busy loops).
      for (let waited = 0; (await proxy.counters()).mappings[0]!.activeConnections < 2; waited += 20) {
        assert.ok(waited < 10_000, 'the proxy did not accept both connections within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal((await proxy.counters()).mappings[0]!.activeConnections, 2);
      assert.ok((await proxy.counters()).faults.find((f) => f.name === 'blackhole')!.timeHeldMs > 0);
      await proxy.stop();
      await Promise.all(clients.map(waitClose));
      await server.close();
      assert.deepEqual(await settledHandles(baseline), baseline);
    });
  });
});
