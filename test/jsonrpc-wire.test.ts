/**
 * The one wire layer of faultline's HTTP doors (src/jsonrpc/bearer.ts, http-body.ts), on real
 * servers and raw sockets: one bearer check (401 + WWW-Authenticate: Bearer for a missing or a
 * wrong token), one bounded body reader (a body over the bound is a 413 that closes the
 * connection, so a request pipelined behind it is never left unanswered on a live socket), one
 * JSON reading with a depth bound.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { requireBearer, tokensMatch } from '../src/jsonrpc/bearer.js';
import { readJsonBody } from '../src/jsonrpc/http-body.js';
import { serveHttp } from '../src/transports/http.js';
import { startAdmin, MAX_ADMIN_BODY } from '../src/proxy/control/admin.js';
import { FaultRegistry } from '../src/proxy/control/registry.js';
import { startProxy } from '../src/proxy/index.js';
import { createServer as createMcpServer } from '../src/server.js';
import { makeConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{
  port: number;
  close: () => Promise<void>;
}> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes `bytes` on one raw connection and returns everything read until the server closes it.
 * Rejects when the server keeps the socket open past `quietMs` with nothing more to say (the
 * wedge: a request left unanswered on a connection that stays up).
 */
function exchange(port: number, bytes: Buffer, quietMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`the connection stayed open with no answer; received:\n${received.slice(0, 2000)}`));
      }, quietMs);
    };
    arm();
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      arm();
    });
    socket.on('error', () => undefined); // a reset after the 413 is a close too
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(bytes);
  });
}

function request(method: string, path: string, headers: Record<string, string | number>, body = ''): Buffer {
  const head = [`${method} ${path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n'), Buffer.from(body)]);
}

test(
  'requireBearer: a missing and a wrong token both get 401 with ' + 'WWW-Authenticate: Bearer; the right one passes',
  async () => {
    const server = await listen((req, res) => {
      if (!requireBearer(req, res, 's3cret')) return;
      res.end('in');
    });
    try {
      const url = `http://127.0.0.1:${server.port}/`;
      const cases: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer wrong' },
        { authorization: 'Basic s3cret' },
      ];
      for (const headers of cases) {
        const response = await fetch(url, { headers });
        assert.equal(response.status, 401);
        assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
        assert.equal(response.headers.get('connection'), 'close');
        assert.match(((await response.json()) as { error: string }).error, /Authorization: Bearer/);
      }
      const ok = await fetch(url, { headers: { authorization: 'bearer  s3cret ' } });
      assert.equal(ok.status, 200);
      assert.equal(await ok.text(), 'in');
    } finally {
      await server.close();
    }
    assert.equal(tokensMatch('a', 'a'), true);
    assert.equal(tokensMatch('a', 'ab'), false);
    assert.equal(tokensMatch('', ''), false, 'an empty token matches nothing');
  },
);

test('readJsonBody: too deep is a 400 before JSON.parse; over the bound a 413 with Connection: close', async () => {
  const server = await listen(async (req, res) => {
    const read = await readJsonBody(req, res, { maxBytes: 1024, maxDepth: 8 });
    res.writeHead(read.ok ? 200 : read.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(read.ok ? { value: read.value } : { problem: read.problem }));
  });
  try {
    const url = `http://127.0.0.1:${server.port}/`;
    const deep = await fetch(url, { method: 'POST', body: '['.repeat(9) + ']'.repeat(9) });
    assert.equal(deep.status, 400);
    assert.match(((await deep.json()) as { problem: string }).problem, /deeper than 8/);
    const fine = await fetch(url, { method: 'POST', body: '{"a":[1]}' });
    assert.deepEqual(await fine.json(), { value: { a: [1] } });
    const big = await fetch(url, { method: 'POST', body: 'x'.repeat(5000) });
    assert.equal(big.status, 413);
    assert.equal(big.headers.get('connection'), 'close');
  } finally {
    await server.close();
  }
});

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

test(
  'the MCP transport: a 413 on a keep-alive connection closes it, ' + 'so a pipelined request is never left hanging',
  async () => {
    const token = 'wire-token';
    const running = await serveHttp({
      host: '127.0.0.1',
      port: 0,
      token,
      newSession: () => createMcpServer(makeConfig()),
      log: silentLogger,
    });
    try {
      const headers = {
        host: `127.0.0.1:${running.port}`,
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        connection: 'keep-alive',
      };
      const oversize = 8 * 1024 * 1024 + 1024;
      const bytes = Buffer.concat([
        request('POST', '/mcp', { ...headers, 'content-length': oversize }, 'x'.repeat(oversize)),
        request('POST', '/mcp', { ...headers, 'content-length': Buffer.byteLength(INITIALIZE) }, INITIALIZE),
      ]);
      const received = await exchange(running.port, bytes);
      assert.match(received, /^HTTP\/1\.1 413 /);
      assert.match(received, /connection: close/i);
      assert.match(received, /Request body over 8388608 bytes/);
      // That socket answered, then closed: a fresh connection is served; a wrong token is the one 401.
      const { connection: _, host: __, ...fetchHeaders } = headers;
      const fresh = await fetch(running.url, { method: 'POST', headers: fetchHeaders, body: INITIALIZE });
      assert.equal(fresh.status, 200);
      await fresh.body?.cancel();
      const wrong = await fetch(running.url, {
        method: 'POST',
        headers: { ...fetchHeaders, authorization: 'Bearer nope' },
        body: INITIALIZE,
      });
      assert.equal(wrong.status, 401);
      assert.match(wrong.headers.get('www-authenticate') ?? '', /^Bearer/);
    } finally {
      await running.close();
    }
  },
);

test('the admin API: one 401 for a missing or wrong token, a 413 closes the connection', async () => {
  // Nothing is proxied: the mapping only gives the registry a target.
  const proxy = await startProxy({ mappings: ['0=127.0.0.1:9#api'], http: true, seed: 1 });
  const registry = new FaultRegistry(proxy);
  const admin = await startAdmin({ host: '127.0.0.1', port: 0, token: 'adm', registry });
  try {
    const url = new URL(admin.url);
    const port = Number(url.port);
    for (const authorization of [undefined, 'Bearer wrong']) {
      const response = await fetch(`${admin.url}/chaos/status`, {
        headers: authorization ? { authorization } : {},
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
    const headers = { host: url.host, authorization: 'Bearer adm', 'content-type': 'application/json' };
    const oversize = MAX_ADMIN_BODY + 10;
    const received = await exchange(
      port,
      Buffer.concat([
        request('POST', '/chaos/clear-all', { ...headers, 'content-length': oversize }, ' '.repeat(oversize)),
        request('GET', '/chaos/status', headers),
      ]),
    );
    assert.match(received, /^HTTP\/1\.1 413 /);
    assert.match(received, /connection: close/i);
  } finally {
    await admin.close();
    registry.dispose();
    await proxy.stop();
  }
});
