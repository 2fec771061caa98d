/** fault_proxy_* tools: a proxy held across calls, live faults, ttl, caps, stop on server exit (in memory and over
 * stdio). */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HELD_LIMITS } from '../src/proxy/control/index.js';
import { connectInMemory, connectStdio, textOf } from './helpers/mcp.js';
import { startUpstream } from './fixtures/http/upstream.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

type Status = {
  id: string;
  listening: Array<{ address: string }>;
  counters: {
    httpFaults?: Array<{ name: string; applications: number; passes: number }>;
    mappings: Array<{ httpExchanges?: number }>;
  };
  recentEvents: string[];
};
const statusOf = (result: unknown): Status => (result as CallToolResult).structuredContent as unknown as Status;
const portOf = (status: Status): number => Number(status.listening[0]!.address.split(':').at(-1));

describe('held proxies (fault_proxy_*)', () => {
  it(
    'insecure_tls reaches an https dependency with a self-signed ' + 'certificate, which is refused without it',
    async () => {
      const https = await import('node:https');
      const { TLS_CERT, TLS_KEY } = await import('./fixtures/proxy/net.js');
      const dependency = https.createServer({ cert: TLS_CERT, key: TLS_KEY }, (_req, res) => res.end('from tls'));
      await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
      const { client, close } = await connectInMemory();
      try {
        const remote = `https://127.0.0.1:${(dependency.address() as net.AddressInfo).port}`;
        const answers: string[] = [];
        for (const insecure of [false, true]) {
          const started = await client.callTool({
            name: 'fault_proxy_start',
            arguments: { proxies: [`0=${remote}`], ...(insecure ? { insecure_tls: true } : {}) },
          });
          assert.equal(started.isError, undefined, textOf(started));
          const status = statusOf(started);
          try {
            const response = await fetch(`http://127.0.0.1:${portOf(status)}/`).then(
              async (r) => `${r.status} ${await r.text()}`,
              (error: Error) => `failed: ${error.message}`,
            );
            answers.push(response);
          } finally {
            await client.callTool({ name: 'fault_proxy_stop', arguments: { id: status.id } });
          }
        }
        assert.doesNotMatch(answers[0]!, /from tls/, 'the self-signed certificate is refused by default');
        assert.equal(answers[1], '200 from tls');
      } finally {
        await close();
        dependency.closeAllConnections();
        await new Promise<void>((resolve) => dependency.close(() => resolve()));
      }
    },
  );

  it('start, set faults live, status, stop', async () => {
    const upstream = await startUpstream();
    const { client, close } = await connectInMemory();
    try {
      const started = await client.callTool({
        name: 'fault_proxy_start',
        arguments: {
          proxies: [`0=127.0.0.1:${upstream.port}#api`],
          faults: ['{"type":"error","statusCode":503,"path":"/orders/**"}'],
          seed: 5,
        },
      });
      assert.equal(started.isError, undefined, textOf(started));
      const status = statusOf(started);
      const port = portOf(status);
      assert.deepEqual(JSON.parse(textOf(started)).id, status.id);
      assert.equal((await fetch(`http://127.0.0.1:${port}/orders/1`)).status, 503);
      assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 200);
      const set = await client.callTool({
        name: 'fault_proxy_set_faults',
        arguments: {
          id: status.id,
          faults: ['{"type":"rate_limit","retry_after":7}', '{"type":"latency","latencyMs":1}'],
        },
      });
      assert.equal(set.isError, undefined, textOf(set));
      const limited = await fetch(`http://127.0.0.1:${port}/orders/1`);
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '7');
      const read = statusOf(await client.callTool({ name: 'fault_proxy_status', arguments: { id: status.id } }));
      assert.equal(read.counters.httpFaults!.find((c) => c.name === 'error')!.applications, 1);
      assert.equal(read.counters.httpFaults!.find((c) => c.name === 'rate_limit')!.applications, 1);
      assert.equal(read.counters.mappings[0]!.httpExchanges, 3);
      // The lines `faultline proxy` logs: client → mapping, then what happened.
      assert.ok(
        read.recentEvents.some((e) => /^\S+ #\d+ 127\.0\.0\.1:\d+ → .*#api.* open$/.test(e)),
        read.recentEvents[0],
      );
      const bad = await client.callTool({
        name: 'fault_proxy_set_faults',
        arguments: { id: status.id, faults: ['{"type":"error","statusCode":42}'] },
      });
      assert.equal(bad.isError, true);
      assert.match(textOf(bad), /faults\[0\]: error fault: status_code must be an HTTP status in 400\.\.599/);
      const notJson = await client.callTool({
        name: 'fault_proxy_set_faults',
        arguments: { id: status.id, faults: ['error'] },
      });
      assert.match(textOf(notJson), /faults\[0\]: not JSON/);
      const stopped = await client.callTool({ name: 'fault_proxy_stop', arguments: { id: status.id } });
      assert.equal(stopped.isError, undefined);
      assert.equal(await listening(port), false);
      const again = await client.callTool({ name: 'fault_proxy_status', arguments: { id: status.id } });
      assert.equal(again.isError, true);
      assert.match(textOf(again), /no held proxy/);
    } finally {
      await close();
      await upstream.close();
    }
  });

  it('stops by itself after ttl, and every held proxy stops when the server closes', async () => {
    const { client, close } = await connectInMemory();
    let lastPort = 0;
    try {
      // Long enough to be seen listening however busy the machine; then gone, never before its ttl.
      const started = Date.now();
      const short = statusOf(
        await client.callTool({ name: 'fault_proxy_start', arguments: { proxies: ['0=127.0.0.1:9'], ttl: 2 } }),
      );
      assert.equal(await listening(portOf(short)), true);
      while ((await listening(portOf(short))) && Date.now() - started < 30_000) await sleep(50);
      assert.ok(Date.now() - started >= 2000, `stopped ${Date.now() - started} ms after the start`);
      assert.equal(await listening(portOf(short)), false);
      const long = statusOf(
        await client.callTool({ name: 'fault_proxy_start', arguments: { proxies: ['0=127.0.0.1:9'] } }),
      );
      lastPort = portOf(long);
      assert.ok(Date.parse((long as unknown as { expiresAt: string }).expiresAt) - Date.now() > 9 * 60_000);
      const tooLong = await client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=127.0.0.1:9'], ttl: 999_999 },
      });
      assert.match(textOf(tooLong), /ttl: seconds, more than 0 and at most 3600/);
      const badMapping = await client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=127.0.0.1:9', 'nonsense'] },
      });
      assert.match(textOf(badMapping), /^proxies\[1\]: invalid proxy mapping "nonsense"/);
    } finally {
      await close();
    }
    for (let i = 0; i < 100 && (await listening(lastPort)); i++) await sleep(50);
    assert.equal(await listening(lastPort), false);
  });

  it(`caps held proxies at ${HELD_LIMITS.maxHeld} and refuses production`, async () => {
    const { client, close } = await connectInMemory();
    try {
      // Failed starts (a bad mapping, a port in use) do not use up the cap.
      await client.callTool({ name: 'fault_proxy_start', arguments: { proxies: ['bad'] } });
      await client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=127.0.0.1:9'], faults: ['{"type":"nope"}'] },
      });
      for (let i = 0; i < HELD_LIMITS.maxHeld; i++) {
        const result = await client.callTool({ name: 'fault_proxy_start', arguments: { proxies: ['0=127.0.0.1:9'] } });
        assert.equal(result.isError, undefined, textOf(result));
      }
      const over = await client.callTool({ name: 'fault_proxy_start', arguments: { proxies: ['0=127.0.0.1:9'] } });
      // The domain says what to do; the tool names the tool that does it.
      assert.match(
        textOf(over),
        /at most 8 proxies may be held at once \(held: .*\); stop one first with fault_proxy_stop$/,
      );
    } finally {
      await close();
    }
    const saved = process.env['ENVIRONMENT'];
    process.env['ENVIRONMENT'] = 'Live';
    const second = await connectInMemory();
    try {
      const refused = await second.client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=127.0.0.1:9'] },
      });
      assert.equal(refused.isError, true);
      assert.match(
        textOf(refused),
        /^refused to start a fault proxy: ENVIRONMENT=Live says this is production; set FAULTLINE_ALLOW_PRODUCTION=1/,
      );
    } finally {
      if (saved === undefined) delete process.env['ENVIRONMENT'];
      else process.env['ENVIRONMENT'] = saved;
      await second.close();
    }
  });

  it(`caps held proxies at ${HELD_LIMITS.maxHeldPerProcess} over all the server's connections`, async () => {
    const sessions = await Promise.all(
      Array.from({ length: Math.ceil(HELD_LIMITS.maxHeldPerProcess / HELD_LIMITS.maxHeld) + 1 }, () =>
        connectInMemory(),
      ),
    );
    try {
      let held = 0;
      let refusal = '';
      for (const { client } of sessions) {
        for (let i = 0; i < HELD_LIMITS.maxHeld && !refusal; i++) {
          const result = (await client.callTool({
            name: 'fault_proxy_start',
            arguments: { proxies: ['0=127.0.0.1:9'], ttl: 60 },
          })) as CallToolResult;
          if (result.isError) refusal = textOf(result);
          else held++;
        }
      }
      assert.equal(held, HELD_LIMITS.maxHeldPerProcess);
      assert.match(
        refusal,
        new RegExp(
          `at most ${HELD_LIMITS.maxHeldPerProcess} proxies may be held by this server over all its connections`,
        ),
      );
      // A connection that closes gives its proxies back.
      await sessions.shift()!.close();
      const after = (await sessions
        .at(-1)!
        .client.callTool({ name: 'fault_proxy_start', arguments: { proxies: ['0=127.0.0.1:9'] } })) as CallToolResult;
      assert.equal(after.isError, undefined, textOf(after));
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
    }
  });

  it('over stdio: the proxy is gone once the server process exits', async () => {
    const session = await connectStdio(['mcp'], { NODE_ENV: 'test', ENVIRONMENT: '' });
    const started = await session.client.callTool({
      name: 'fault_proxy_start',
      arguments: { proxies: ['0=127.0.0.1:9'] },
    });
    const port = portOf(statusOf(started));
    assert.equal(await listening(port), true);
    await session.close();
    const deadline = Date.now() + HANG_GUARD_MS;
    while ((await listening(port)) && Date.now() < deadline) await sleep(100);
    assert.equal(await listening(port), false);
  });
});

describe('held proxies obey the target policy', () => {
  it('a mapping to the metadata address or a non-loopback bind is refused, naming proxies', async () => {
    const { client, close } = await connectInMemory();
    try {
      for (const mapping of ['0=169.254.169.254:80', '0.0.0.0:0=127.0.0.1:80', '80=127.0.0.1:8080', 'no mapping']) {
        const result = (await client.callTool({
          name: 'fault_proxy_start',
          arguments: { proxies: [mapping] },
        })) as CallToolResult;
        assert.equal(result.isError, true, `${mapping}: ${textOf(result)}`);
        assert.match(textOf(result), /proxies\[0\]/, mapping);
      }
      // A fault whose target names no mapping is refused naming its place in `faults`, network
      // and HTTP faults counted together (the proxy sees them apart).
      const upstream = await startUpstream();
      try {
        const badTarget = (await client.callTool({
          name: 'fault_proxy_start',
          arguments: {
            proxies: [`0=127.0.0.1:${upstream.port}#api`],
            faults: ['{"type":"latency","latencyMs":5}', '{"type":"error","target":"apj"}'],
          },
        })) as CallToolResult;
        assert.equal(badTarget.isError, true);
        assert.match(textOf(badTarget), /^faults\[1\]: fault target "apj" names no mapping; accepted: #api/);
        const started = statusOf(
          await client.callTool({
            name: 'fault_proxy_start',
            arguments: { proxies: [`0=127.0.0.1:${upstream.port}#api`] },
          }),
        );
        const set = (await client.callTool({
          name: 'fault_proxy_set_faults',
          arguments: { id: started.id, faults: ['{"type":"error"}', '{"type":"rate_limit","target":"nope"}'] },
        })) as CallToolResult;
        assert.equal(set.isError, true);
        assert.match(
          textOf(set),
          new RegExp(`^faults\\[1\\]: fault target "nope" names no mapping; accepted: ${portOf(started)}, #api`),
        );
        await client.callTool({ name: 'fault_proxy_stop', arguments: { id: started.id } });
      } finally {
        await upstream.close();
      }
      // Two mappings with one #name would make a fault's target ambiguous.
      const twice = (await client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=127.0.0.1:9#api', '0=127.0.0.1:10#api'] },
      })) as CallToolResult;
      assert.equal(twice.isError, true);
      assert.match(textOf(twice), /^proxies\[1\] \("0=127\.0\.0\.1:10#api"\): the name #api is already proxies\[0\]'s/);
      // A local port already taken (here by the first of two mappings) names the mapping too.
      const squatter = net.createServer();
      await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
      const port = (squatter.address() as net.AddressInfo).port;
      try {
        const taken = (await client.callTool({
          name: 'fault_proxy_start',
          arguments: { proxies: ['0=127.0.0.1:9', `${port}=127.0.0.1:9`] },
        })) as CallToolResult;
        assert.equal(taken.isError, true);
        assert.match(
          textOf(taken),
          new RegExp(`^proxies\\[1\\]: cannot listen on 127\\.0\\.0\\.1:${port} .*already in use`),
        );
      } finally {
        await new Promise<void>((resolve) => squatter.close(() => resolve()));
      }
    } finally {
      await close();
    }
  });
});
