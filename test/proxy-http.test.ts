/** The HTTP-aware stage and its eight faults, against a real node:http upstream, with fetch and raw sockets. */
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { forEachPlacement, type TestProxy } from './helpers/proxy-under-test.js';
import { removePath, globToRegExp, classify, type HttpFaultSpec } from '../src/proxy/http/index.js';
import { MAX_BUFFERED_BODY } from '../src/proxy/http/stage.js';
import {
  handleCounts,
  settledHandles,
  startServer,
  echo,
  connect,
  readBytes,
  destroyAndWait,
  TLS_CERT,
  TLS_KEY,
} from './fixtures/proxy/net.js';
import { JSON_BODY, RawClient, startUpstream, type Upstream } from './fixtures/http/upstream.js';

forEachPlacement((startProxy) => {
  async function withHttpProxy(
    faults: HttpFaultSpec[],
    body: (proxy: TestProxy, upstream: Upstream, port: number) => Promise<void>,
    seed: number | string = 1,
  ): Promise<void> {
    const baseline = handleCounts();
    const upstream = await startUpstream();
    const proxy = await startProxy({
      mappings: [`0=127.0.0.1:${upstream.port}`],
      http: true,
      httpFaults: faults,
      seed,
    });
    try {
      await body(proxy, upstream, proxy.ports[0]!);
    } finally {
      await proxy.stop();
      await upstream.close();
    }
    assert.deepEqual(await settledHandles(baseline), baseline);
  }

  describe('HTTP stage without faults', () => {
    it(
      'forwards keep-alive exchanges, chunked and fixed bodies, HEAD ' +
        'and request bodies, over one upstream connection',
      async () => {
        await withHttpProxy([], async (proxy, upstream, port) => {
          const client = await RawClient.connect(port);
          const json = await client.request('GET', '/json');
          assert.equal(json.status, 200);
          assert.deepEqual(JSON.parse(json.body.toString()), JSON_BODY);
          assert.equal(json.headers['content-length'], String(json.body.length));
          const chunked = await client.request('GET', '/chunked');
          assert.equal(chunked.headers['transfer-encoding'], 'chunked');
          assert.equal(chunked.body.toString(), 'hello world');
          const echoed = await client.request('POST', '/echo', '{"x":1}', { 'content-type': 'application/json' });
          assert.equal(echoed.body.toString(), '{"x":1}');
          // The Host naming the proxy is pointed at the remote.
          assert.equal((await client.request('GET', '/host')).body.toString(), `127.0.0.1:${upstream.port}`);
          assert.equal(upstream.connections, 1);
          // (node's own server closes after a HEAD answer without content-length, so HEAD goes last)
          const head = await client.request('HEAD', '/json');
          assert.equal(head.status, 200);
          assert.equal(head.body.length, 0);
          assert.equal(client.closed, false);
          await client.close();
          const counters = await proxy.counters();
          assert.equal(counters.mappings[0]!.httpConnections, 1);
          assert.equal(counters.mappings[0]!.httpExchanges, 5);
        });
      },
    );

    it('serves fetch (undici) and passes non-HTTP traffic through as TCP', async () => {
      const baseline = handleCounts();
      const upstream = await startUpstream();
      const echoServer = await startServer(echo);
      const proxy = await startProxy({
        mappings: [`0=127.0.0.1:${upstream.port}`, `0=127.0.0.1:${echoServer.port}`],
        http: true,
      });
      try {
        const response = await fetch(`http://127.0.0.1:${proxy.ports[0]}/json`);
        assert.deepEqual(await response.json(), JSON_BODY);
        const socket = await connect(proxy.ports[1]!);
        const bytes = Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x00]);
        socket.write(bytes);
        assert.deepEqual(await readBytes(socket, bytes.length), bytes);
        await destroyAndWait(socket);
      } finally {
        await proxy.stop();
        await upstream.close();
        await echoServer.close();
      }
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('in front of an https upstream the proxy originates TLS and the faults see plain HTTP', async () => {
      const baseline = handleCounts();
      const received: string[] = [];
      const server = https.createServer({ cert: TLS_CERT, key: TLS_KEY }, (req, res) => {
        received.push(`${req.headers['host']} ${req.url}`);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(JSON_BODY));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const proxy = await startProxy({
        mappings: [`0=https://localhost:${port}#secure`],
        http: true,
        tls: { ca: TLS_CERT },
        httpFaults: [{ type: 'schema_mismatch', missing_fields: ['items'], target: 'secure' }],
      });
      try {
        const response = await fetch(`http://127.0.0.1:${proxy.ports[0]}/json`);
        assert.deepEqual(await response.json(), { id: 7, data: JSON_BODY.data });
        assert.deepEqual(received, [`localhost:${port} /json`]);
      } finally {
        await proxy.stop();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('answers 502 when the upstream cannot be reached, and counts the connect failure', async () => {
      const baseline = handleCounts();
      const closed = await startServer(() => {});
      const port = closed.port;
      await closed.close();
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${port}`], http: true });
      try {
        const response = await fetch(`http://127.0.0.1:${proxy.ports[0]}/`);
        assert.equal(response.status, 502);
        assert.match(await response.text(), /could not be reached/);
        assert.equal((await proxy.counters()).mappings[0]!.connectFailures, 1);
      } finally {
        await proxy.stop();
      }
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('passes an Upgrade (WebSocket-style) exchange through as a tunnel', async () => {
      const baseline = handleCounts();
      const server = http.createServer((_req, res) => res.end('plain'));
      server.on('upgrade', (req: http.IncomingMessage, socket: import('node:net').Socket) => {
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nupgrade: echo\r\nconnection: ` +
            `Upgrade\r\nx-host: ${req.headers['host']}\r\n\r\n`,
        );
        socket.pipe(socket);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const proxy = await startProxy({
        mappings: [`0=127.0.0.1:${port}`],
        http: true,
        httpFaults: [{ type: 'error' }],
      });
      try {
        const socket = await connect(proxy.ports[0]!);
        let received = '';
        const until = async (text: string): Promise<void> => {
          for (let i = 0; i < 200 && !received.includes(text); i++)
            await new Promise((resolve) => setTimeout(resolve, 10));
        };
        socket.on('data', (data: Buffer) => (received += data.toString()));
        socket.write('GET /ws HTTP/1.1\r\nhost: 127.0.0.1\r\nupgrade: echo\r\nconnection: Upgrade\r\n\r\n');
        await until('\r\n\r\n');
        assert.match(received, /^HTTP\/1\.1 101 /);
        assert.match(received, new RegExp(`x-host: 127\\.0\\.0\\.1:${port}`));
        socket.write('ping');
        await until('ping');
        assert.ok(received.endsWith('\r\n\r\nping'), JSON.stringify(received));
        await destroyAndWait(socket);
      } finally {
        await proxy.stop();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('classifies first bytes', () => {
      assert.equal(classify(Buffer.from('GET / HTTP/1.1\r\n')), 'http');
      assert.equal(classify(Buffer.from('GE')), 'more');
      assert.equal(classify(Buffer.from('PRI * HTTP/2.0')), 'tcp');
      assert.equal(classify(Buffer.from([0x16, 0x03])), 'tcp');
    });
  });

  describe('HTTP faults', () => {
    it('error answers without reaching the upstream and keeps the connection alive', async () => {
      await withHttpProxy(
        [{ type: 'error', status_code: 503, error_body: '{"down":true}' }],
        async (proxy, upstream, port) => {
          const client = await RawClient.connect(port);
          for (let i = 0; i < 3; i++) {
            const response = await client.request('POST', '/orders', '{"n":1}', { 'content-type': 'application/json' });
            assert.equal(response.status, 503);
            assert.equal(response.body.toString(), '{"down":true}');
            assert.equal(response.headers['content-type'], 'application/json');
            assert.equal(response.headers['content-length'], '13');
          }
          assert.equal(client.closed, false);
          await client.close();
          assert.deepEqual(upstream.received, []);
          assert.equal(upstream.connections, 0);
          const [counters] = (await proxy.counters()).httpFaults!;
          assert.deepEqual(
            { requests: counters!.requests, applications: counters!.applications, passes: counters!.passes },
            { requests: 3, applications: 3, passes: 0 },
          );
        },
      );
    });

    it('error with forward: true calls the upstream, then replaces its answer', async () => {
      await withHttpProxy([{ type: 'error', statusCode: 502, forward: true }], async (_proxy, upstream, port) => {
        const response = await fetch(`http://127.0.0.1:${port}/json`);
        assert.equal(response.status, 502);
        assert.deepEqual(await response.json(), { error: 'faultline injected error' });
        assert.deepEqual(upstream.received, ['GET /json']);
      });
    });

    it('rate_limit answers 429 with Retry-After; method and path globs select the requests', async () => {
      await withHttpProxy(
        [{ type: 'rate-limit', retryAfterSeconds: 5, method: 'POST', path: '/api/**' }],
        async (_proxy, upstream, port) => {
          const client = await RawClient.connect(port);
          const limited = await client.request('POST', '/api/v1/items', 'x');
          assert.equal(limited.status, 429);
          assert.equal(limited.headers['retry-after'], '5');
          assert.equal((await client.request('GET', '/api/v1/items')).status, 200);
          assert.equal((await client.request('POST', '/other', 'x')).status, 200);
          await client.close();
          assert.deepEqual(upstream.received, ['GET /api/v1/items', 'POST /other']);
        },
      );
    });

    it('latency delays before forwarding and stacks with a later fault', async () => {
      await withHttpProxy(
        [
          { type: 'latency', delayMs: 150 },
          { type: 'error', status_code: 500 },
        ],
        async (proxy, upstream, port) => {
          const started = performance.now();
          const response = await fetch(`http://127.0.0.1:${port}/`);
          assert.equal(response.status, 500);
          await response.arrayBuffer();
          assert.ok(performance.now() - started >= 140);
          assert.deepEqual(upstream.received, []);
          assert.deepEqual(
            (await proxy.counters()).httpFaults!.map((c) => c.applications),
            [1, 1],
          );
        },
      );
    });

    it('timeout holds the exchange for hang ms, then closes without calling the upstream', async () => {
      await withHttpProxy([{ type: 'timeout', hangMs: 200 }], async (_proxy, upstream, port) => {
        const client = await RawClient.connect(port);
        const started = performance.now();
        client.send('GET', '/');
        const bytes = await client.readToClose();
        assert.equal(bytes.length, 0);
        assert.ok(performance.now() - started >= 190);
        assert.deepEqual(upstream.received, []);
      });
    });

    it('timeout without hang holds until the client gives up', async () => {
      await withHttpProxy([{ type: 'timeout' }], async (_proxy, upstream, port) => {
        await assert.rejects(
          fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(200) }),
          /abort|timeout/i,
        );
        assert.deepEqual(upstream.received, []);
      });
    });

    it('malformed answers a 2xx whose JSON does not parse, with a correct content-length', async () => {
      await withHttpProxy([{ type: 'malformed' }], async (_proxy, _upstream, port) => {
        const client = await RawClient.connect(port);
        const response = await client.request('GET', '/json');
        assert.equal(response.status, 200);
        assert.equal(response.headers['content-type'], 'application/json');
        assert.equal(Number(response.headers['content-length']), response.body.length);
        assert.throws(() => JSON.parse(response.body.toString()));
        assert.equal((await client.request('GET', '/json')).status, 200, 'keep-alive survives');
        await client.close();
      });
    });

    it('malformed with corruptResponse: false leaves the body alone', async () => {
      await withHttpProxy([{ type: 'malformed', corruptResponse: false }], async (_proxy, _upstream, port) => {
        assert.deepEqual(await (await fetch(`http://127.0.0.1:${port}/json`)).json(), JSON_BODY);
      });
    });

    it(
      'schema_mismatch removes dot paths (through arrays) and ' +
        'recomputes content-length; other bodies are untouched',
      async () => {
        await withHttpProxy(
          [{ type: 'schema-mismatch', missingFields: ['id', 'data.user.email', 'items.price'] }],
          async (_proxy, _upstream, port) => {
            const client = await RawClient.connect(port);
            const response = await client.request('GET', '/json');
            assert.deepEqual(JSON.parse(response.body.toString()), {
              data: { user: { name: 'Ada' } },
              items: [{ name: 'x' }, { name: 'y' }],
            });
            assert.equal(Number(response.headers['content-length']), response.body.length);
            const chunked = await client.request('GET', '/chunked');
            assert.equal(chunked.body.toString(), 'hello world');
            await client.close();
          },
        );
      },
    );

    it(
      'an upstream that resets mid-body under a body-reading fault ' + 'closes that client, and the proxy goes on',
      async () => {
        await withHttpProxy([{ type: 'schema_mismatch', missing_fields: ['a'] }], async (_proxy, _upstream, port) => {
          await assert.rejects(async () => (await fetch(`http://127.0.0.1:${port}/reset`)).text());
          assert.deepEqual(await (await fetch(`http://127.0.0.1:${port}/json`)).json(), JSON_BODY);
        });
      },
    );

    it('connection_refused resets the client connection before any answer', async () => {
      await withHttpProxy([{ type: 'connection-refused' }], async (_proxy, upstream, port) => {
        const client = await RawClient.connect(port);
        client.send('GET', '/');
        assert.equal((await client.readToClose()).length, 0);
        assert.equal(client.reset, true);
        assert.deepEqual(upstream.received, []);
        await assert.rejects(fetch(`http://127.0.0.1:${port}/`));
      });
    });

    it('connection_drop sends the head and exactly after_bytes of the body, then closes', async () => {
      await withHttpProxy([{ type: 'connection_drop', after_bytes: 1000 }], async (_proxy, upstream, port) => {
        const client = await RawClient.connect(port);
        client.send('GET', '/bytes/5000');
        const bytes = await client.readToClose();
        const headEnd = bytes.indexOf('\r\n\r\n') + 4;
        assert.match(bytes.subarray(0, headEnd).toString(), /content-length: 5000/i);
        assert.equal(bytes.length - headEnd, 1000);
        assert.deepEqual(upstream.received, ['GET /bytes/5000']);
        await assert.rejects(async () => (await fetch(`http://127.0.0.1:${port}/bytes/5000`)).arrayBuffer());
      });
    });

    it('a response fault is counted when the exchange settles, so applications never goes down', async () => {
      const faults: HttpFaultSpec[] = [{ type: 'connection_drop', after_bytes: 100_000 }];
      await withHttpProxy(faults, async (proxy, upstream, port) => {
        const client = await RawClient.connect(port);
        const answered = client.request('GET', '/hold');
        while (!upstream.received.includes('GET /hold')) await new Promise((resolve) => setTimeout(resolve, 5));
        // Drawn, waiting for the upstream: neither changed nor unchanged yet (it was 1 here, then 0: a counter's fall).
        const waiting = (await proxy.counters()).httpFaults![0]!;
        assert.deepEqual([waiting.requests, waiting.applications, waiting.unchanged], [1, 0, 0]);
        upstream.release();
        assert.equal((await answered).body.toString(), 'held');
        const settled = (await proxy.counters()).httpFaults![0]!;
        assert.deepEqual([settled.requests, settled.applications, settled.unchanged], [1, 0, 1]);
        // The upstream failed mid-body before the fault could cut: the fault changed nothing there.
        await client.close();
        const cut = await RawClient.connect(port);
        cut.send('GET', '/reset');
        await cut.readToClose();
        const failed = (await proxy.counters()).httpFaults![0]!;
        assert.deepEqual([failed.requests, failed.applications, failed.unchanged], [2, 0, 2]);
      });
    });

    it(
      'connection_drop at or past the end of the body cuts nothing: the answer goes as it was, ' +
        'the connection kept, and the exchange counts unchanged, not applied',
      async () => {
        await withHttpProxy([{ type: 'connection_drop', after_bytes: 100_000 }], async (proxy, _upstream, port) => {
          const client = await RawClient.connect(port);
          const whole = await client.request('GET', '/json');
          assert.equal(whole.status, 200);
          assert.deepEqual(JSON.parse(whole.body.toString()), JSON_BODY);
          assert.notEqual(whole.headers['connection'], 'close');
          assert.equal((await client.request('GET', '/json')).status, 200, 'keep-alive survives');
          assert.equal(client.closed, false);
          await client.close();
          // A real keep-alive client: every request reaches the fault and gets its whole answer.
          const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
          try {
            for (let i = 0; i < 10; i++) {
              const status = await new Promise<number | string>((resolve) => {
                const request = http.get({ host: '127.0.0.1', port, path: '/json', agent }, (response) => {
                  response.resume();
                  response.on('end', () => resolve(response.statusCode ?? 0));
                });
                request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
              });
              assert.equal(status, 200, `request ${i}`);
            }
          } finally {
            agent.destroy();
          }
          const counters = (await proxy.counters()).httpFaults![0]!;
          assert.deepEqual([counters.requests, counters.applications, counters.unchanged], [12, 0, 12]);
        });
      },
    );

    it(
      "connection_drop with mcp-chaos-monkey's afterMs closes that long " +
        'after forwarding, also when the upstream is slower',
      async () => {
        const baseline = handleCounts();
        // The upstream would answer after a minute: only the fault can end the exchange this early.
        const UPSTREAM_MS = 60_000;
        const slow = http.createServer((_req, res) => {
          const timer = setTimeout(() => res.end('late'), UPSTREAM_MS);
          res.on('close', () => clearTimeout(timer));
        });
        await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
        const proxy = await startProxy({
          mappings: [`0=127.0.0.1:${(slow.address() as AddressInfo).port}`],
          http: true,
          httpFaults: [{ type: 'connection-drop', afterMs: 100 }],
        });
        try {
          const client = await RawClient.connect(proxy.ports[0]!);
          const started = performance.now();
          client.send('GET', '/');
          const bytes = await client.readToClose();
          const elapsed = performance.now() - started;
          assert.equal(bytes.length, 0, 'no answer before the cut');
          // The cut comes at afterMs (never before), not when the upstream answers; how soon after
          // afterMs is bench/checks/proxy.ts's (proxy.http-drop-after).
          assert.ok(elapsed >= 90, `closed after ${elapsed.toFixed(0)} ms`);
        } finally {
          await proxy.stop();
          slow.closeAllConnections();
          await new Promise<void>((resolve) => slow.close(() => resolve()));
        }
        assert.deepEqual(await settledHandles(baseline), baseline);
      },
    );

    it(
      'a response fault on a body above 16 MiB passes it through whole ' + 'and counts it oversized, not applied',
      async () => {
        await withHttpProxy([{ type: 'malformed' }], async (proxy, _upstream, port) => {
          const size = MAX_BUFFERED_BODY + 1_000_000;
          const client = await RawClient.connect(port);
          const big = await client.request('GET', `/bytes/${size}`);
          assert.equal(big.status, 200);
          assert.equal(big.body.length, size);
          assert.ok(
            big.body.every((byte) => byte === 0x61),
            'the body went through unchanged',
          );
          // The connection is still good, and the fault still acts on a body it can read.
          const small = await client.request('GET', '/json');
          assert.throws(() => JSON.parse(small.body.toString()));
          await client.close();
          const counters = (await proxy.counters()).httpFaults![0]!;
          assert.deepEqual(
            {
              requests: counters.requests,
              applications: counters.applications,
              passes: counters.passes,
              oversized: counters.oversized,
            },
            { requests: 2, applications: 1, passes: 0, oversized: 1 },
          );
        });
      },
    );

    it(
      'connection_drop on a chunked upstream body: content-length of ' + 'the whole body, then exactly after_bytes',
      async () => {
        await withHttpProxy(
          [{ type: 'connection-drop', afterBytes: 3, path: '/chunked' }],
          async (_proxy, _upstream, port) => {
            const client = await RawClient.connect(port);
            assert.equal((await client.request('GET', '/json')).status, 200, 'other paths untouched');
            client.send('GET', '/chunked');
            const bytes = await client.readToClose();
            const headEnd = bytes.indexOf('\r\n\r\n') + 4;
            assert.match(bytes.subarray(0, headEnd).toString(), /content-length: 11\r\n/i);
            assert.doesNotMatch(bytes.subarray(0, headEnd).toString(), /transfer-encoding/i);
            assert.equal(bytes.subarray(headEnd).toString(), 'hel');
          },
        );
      },
    );

    it('a drawn exchange the fault leaves as it was counts unchanged, not applied; a changed one applied', async () => {
      // [fault, path, changed]: settings that change nothing, and conditions the answer does not meet.
      const cases: Array<[HttpFaultSpec, string, boolean]> = [
        [{ type: 'latency', delay: 0 }, '/json', false],
        [{ type: 'latency', delayMs: 1 }, '/json', true],
        [{ type: 'malformed', corruptResponse: false }, '/json', false],
        [{ type: 'connection-drop', afterBytes: 100_000 }, '/bytes/11', false],
        [{ type: 'connection-drop', afterBytes: 11 }, '/bytes/11', false],
        [{ type: 'connection-drop', afterBytes: 10 }, '/bytes/11', true],
        [{ type: 'schema-mismatch', missingFields: ['absent', 'data.absent'] }, '/json', false],
        [{ type: 'schema-mismatch', missingFields: ['id'] }, '/chunked', false],
        [{ type: 'schema-mismatch', missingFields: ['items.price'] }, '/json', true],
        [{ type: 'error', forward: true, statusCode: 503, error_body: 'status 503' }, '/status/503', false],
        [{ type: 'error', forward: true, statusCode: 503 }, '/status/503', true],
        [{ type: 'rate_limit', retryAfterSeconds: 0 }, '/json', true],
        [{ type: 'error', probability: 0 }, '/json', false],
      ];
      for (const [fault, path, changed] of cases) {
        await withHttpProxy([fault], async (proxy, upstream, port) => {
          const client = await RawClient.connect(port);
          // A cut closes before the whole answer: read() refuses it.
          const response = await client.request('GET', path).catch(() => undefined);
          await client.close();
          const direct = await fetch(`http://127.0.0.1:${upstream.port}${path}`);
          const upstreamBody = Buffer.from(await direct.arrayBuffer());
          const counters = (await proxy.counters()).httpFaults![0]!;
          const what = `${JSON.stringify(fault)} on ${path}: ${JSON.stringify(counters)} ${response?.raw.toString()}`;
          const drawn = fault.probability === 0 ? 0 : 1;
          assert.deepEqual(
            [counters.requests, counters.applications, counters.unchanged, counters.passes],
            [1, changed ? 1 : 0, changed ? 0 : drawn, 1 - drawn],
            what,
          );
          // Unchanged means what the client read: the upstream's status and body, byte for byte.
          if (!changed) {
            assert.equal(response?.status, direct.status, what);
            assert.ok(response.body.equals(upstreamBody), what);
          }
        });
      }
    });

    it('probability: within statistical bounds, and the same seed gives the same decisions', async () => {
      const run = async (seed: number): Promise<number[]> => {
        const statuses: number[] = [];
        await withHttpProxy(
          [{ type: 'error', probability: 0.3 }],
          async (_proxy, _upstream, port) => {
            const client = await RawClient.connect(port);
            for (let i = 0; i < 400; i++) statuses.push((await client.request('GET', '/')).status);
            await client.close();
          },
          seed,
        );
        return statuses;
      };
      const first = await run(42);
      const errors = first.filter((s) => s === 500).length;
      // Binomial(400, 0.3): mean 120, sd ≈ 9.2; ±5 sd.
      assert.ok(errors > 74 && errors < 166, `${errors} errors of 400`);
      assert.deepEqual(await run(42), first);
      assert.notDeepEqual(await run(43), first);
    });

    it('faults swap live on an open connection, and a target limits them to one mapping', async () => {
      const baseline = handleCounts();
      const upstream = await startUpstream();
      const proxy = await startProxy({
        mappings: [`0=127.0.0.1:${upstream.port}#api`, `0=127.0.0.1:${upstream.port}`],
        http: true,
      });
      try {
        const a = await RawClient.connect(proxy.ports[0]!);
        const b = await RawClient.connect(proxy.ports[1]!);
        assert.equal((await a.request('GET', '/')).status, 200);
        await proxy.setHttpFaults([{ type: 'error', statusCode: 503, target: 'api' }]);
        assert.equal((await a.request('GET', '/')).status, 503);
        assert.equal((await b.request('GET', '/')).status, 200);
        await proxy.setHttpFaults([{ type: 'error', statusCode: 504, target: String(proxy.ports[1]) }]);
        assert.equal((await a.request('GET', '/')).status, 200);
        assert.equal((await b.request('GET', '/')).status, 504);
        await assert.rejects(
          async () => proxy.setHttpFaults([{ type: 'error', status_code: 200 }]),
          /status_code must be an HTTP status in 400\.\.599/,
        );
        await assert.rejects(async () => proxy.setHttpFaults([{ type: 'teapot' }]), /HTTP fault type must be one of/);
        await assert.rejects(
          async () => proxy.setHttpFaults([{ type: 'error', colour: 'red' }]),
          /unknown field "colour"/,
        );
        await assert.rejects(
          async () => proxy.setHttpFaults([{ type: 'error', target: 'apl' }]),
          /fault target "apl" names no mapping; accepted: \d+, #api, \d+/,
        );
        // README spells a name target `#name`: accepted as written, for HTTP and network faults.
        await proxy.setHttpFaults([{ type: 'error', statusCode: 502, target: '#api' }]);
        assert.equal((await a.request('GET', '/')).status, 502);
        assert.equal((await b.request('GET', '/')).status, 200);
        await proxy.setFaults([{ type: 'latency', latencyMs: 1, target: '#api' } as never]);
        // With several faults, the error names the one at fault.
        await assert.rejects(
          async () => proxy.setHttpFaults([{ type: 'rate_limit' }, { type: 'error', target: '#apl' }]),
          /^InputError: faults\[1\]: fault target "#apl"/,
        );
        await assert.rejects(
          async () => proxy.setFaults([{ type: 'blackhole', target: 'apl' } as never]),
          /fault target "apl" names no mapping/,
        );
        await a.close();
        await b.close();
      } finally {
        await proxy.stop();
        await upstream.close();
      }
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('network faults still apply to the upstream leg of an HTTP mapping', async () => {
      await withHttpProxy([], async (proxy, _upstream, port) => {
        await proxy.setFaults([{ type: 'latency', latencyMs: 150 }]);
        const started = performance.now();
        await (await fetch(`http://127.0.0.1:${port}/`)).text();
        assert.ok(performance.now() - started >= 140);
      });
    });
  });
});

describe('HTTP fault helpers', () => {
  it('removePath and globToRegExp', () => {
    const value = { a: { b: 1, c: 2 }, list: [{ b: 1 }, { b: 2, d: 3 }] };
    removePath(value, ['a', 'b']);
    removePath(value, ['list', 'b']);
    assert.deepEqual(value, { a: { c: 2 }, list: [{}, { d: 3 }] });
    assert.ok(globToRegExp('/api/*').test('/api/x'));
    assert.ok(!globToRegExp('/api/*').test('/api/x/y'));
    assert.ok(globToRegExp('/api/**').test('/api/x/y'));
  });
});
