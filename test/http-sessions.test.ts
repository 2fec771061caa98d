/**
 * HTTP sessions under load: a client never evicts another client's active session; when every
 * session is active a new initialize is answered 503 with Retry-After; a session with a call in
 * flight or holding proxies is never closed; an inactive one (an open GET stream is not activity)
 * makes room; a DELETE is answered and the GET stream left for the client to drop. Real SDK clients over
 * streamable HTTP (raw sockets where the order of bytes on the wire is the subject), against the real CLI and, with a
 * clock the
 * test moves, against the transport in process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectSocket, createServer as createTcpServer, type Socket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { serveHttp } from '../src/transports/http.js';
import { createServer } from '../src/server.js';
import { makeConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startCliProcess } from './helpers/processes.js';
import { testSchemaValidator, textOf } from './helpers/mcp.js';

/** What the clients' fetches saw: statuses, and the Retry-After of every 503. */
interface Seen {
  statuses: Map<number, number>;
  retryAfter: string[];
}

function observingFetch(seen: Seen): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    seen.statuses.set(response.status, (seen.statuses.get(response.status) ?? 0) + 1);
    if (response.status === 404 && process.env.SESS_DBG)
      (await import('node:fs')).appendFileSync(
        process.env.SESS_DBG,
        `${Date.now()} CLIENT 404 ${init?.method} ${new Headers(init?.headers).get('mcp-session-id')}\n`,
      );
    if (response.status === 503) seen.retryAfter.push(response.headers.get('retry-after') ?? '');
    return response;
  };
}

async function connect(url: URL, seen: Seen): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, { fetch: observingFetch(seen) });
  const client = new Client({ name: 'sessions', version: '0' }, { jsonSchemaValidator: testSchemaValidator });
  await client.connect(transport);
  return { client, transport };
}

/**
 * The default cap (64) and 8 more: the excess is what the test is about (told to retry, none
 * evicted for them), and 8 show that as 32 did; each session beyond is ~70 ms of the server's CPU.
 */
const SESSIONS = 72;
const CALLS = 3;

test(
  `${SESSIONS} concurrent SDK-client sessions against faultline ` + `mcp: none evicted, the excess told when to retry`,
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'faultline-sessions-'));
    await writeFile(join(dir, 'app.py'), 'def handle(request):\n    return request\n');
    const cli = startCliProcess(['mcp', '--transport', 'http', '--port', '0', '--no-token', '--root', dir]);
    try {
      const url = new URL((await cli.waitFor(/listening on (http:\/\/\S+)/))[1]!);
      const seen: Seen = { statuses: new Map(), retryAfter: [] };
      // Nobody leaves before every client has either a session or its first 503: so exactly the
      // cap's worth get in first, whatever the machine's speed.
      let settled = 0;
      let release!: () => void;
      const everyoneTried = new Promise<void>((resolve) => (release = resolve));
      const tried = (): void => {
        if (++settled === SESSIONS) release();
      };
      let refusedFirst = 0;
      const results = await Promise.all(
        Array.from({ length: SESSIONS }, async (_, index) => {
          let session: Awaited<ReturnType<typeof connect>> | undefined;
          let first = true;
          while (!session) {
            try {
              session = await connect(url, seen);
            } catch (error) {
              assert.match(String(error), /503|Too many active sessions/, String(error));
              if (first) refusedFirst++;
            }
            if (first) {
              first = false;
              tried();
            }
            if (!session) await new Promise((resolve) => setTimeout(resolve, 100));
          }
          await everyoneTried;
          const answers: string[] = [];
          for (let call = 0; call < CALLS; call++) {
            const result = (await session.client.callTool({
              name: 'fault_list_function_names',
              arguments: { file: join(dir, 'app.py') },
            })) as CallToolResult;
            assert.equal(result.isError, undefined, `client ${index}: ${textOf(result)}`);
            answers.push(textOf(result));
          }
          await session.transport.terminateSession();
          await session.client.close();
          return answers;
        }),
      );
      assert.equal(results.length, SESSIONS);
      for (const answers of results)
        assert.deepEqual(
          answers,
          Array.from({ length: CALLS }, () => '["handle"]'),
        );
      assert.equal(refusedFirst, SESSIONS - 64, 'the default cap of 64 active sessions, none evicted for a newcomer');
      assert.equal(seen.statuses.get(404) ?? 0, 0, 'no session was lost under its client');
      assert.ok(seen.retryAfter.length >= SESSIONS - 64);
      for (const value of seen.retryAfter) assert.match(value, /^[1-9]\d*$/, 'Retry-After in whole seconds');
    } finally {
      await cli.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test('an inactive session makes room, an active one never; in flight or holding proxies, never', async () => {
  let clock = 1_000_000;
  const running = await serveHttp({
    host: '127.0.0.1',
    port: 0,
    log: silentLogger,
    maxSessions: 2,
    activeMs: 60_000,
    now: () => clock,
    newSession: () => createServer(makeConfig()),
  });
  const url = new URL(running.url);
  const seen: Seen = { statuses: new Map(), retryAfter: [] };
  const open: Client[] = [];
  const silentSockets = new Set<Socket>();
  const silent = createTcpServer((socket) => silentSockets.add(socket));
  try {
    const holder = await connect(url, seen);
    const idle = await connect(url, seen);
    open.push(holder.client, idle.client);
    // Both are active: a third client is told when to come back, and nobody is closed.
    clock += 10_000;
    await assert.rejects(connect(url, seen), /Too many active sessions/);
    assert.deepEqual(seen.retryAfter, ['50']);
    const held = (await holder.client.callTool({
      name: 'fault_proxy_start',
      arguments: { proxies: ['0=127.0.0.1:9'] },
    })) as CallToolResult;
    assert.equal(held.isError, undefined, textOf(held));
    // Past the activity window: the idle one (its GET stream still open) makes room; the one
    // holding a proxy is kept, and its proxy answers.
    clock += 120_000;
    const newcomer = await connect(url, seen);
    open.push(newcomer.client);
    const heldId = (held.structuredContent as { id: string }).id;
    const status = (await holder.client.callTool({
      name: 'fault_proxy_status',
      arguments: { id: heldId },
    })) as CallToolResult;
    assert.equal(status.isError, undefined, textOf(status));
    await assert.rejects(idle.client.listTools(), /404|Session not found/);
    // The holder holds, the newcomer is recent: 503 until the newcomer turns inactive.
    await assert.rejects(connect(url, seen), /Too many active sessions/);
    assert.equal(seen.retryAfter.at(-1), '60');
    await holder.client.callTool({ name: 'fault_proxy_stop', arguments: { id: heldId } });

    // A call in flight keeps its session, however long ago it began: a scenario against a server
    // that accepts and never answers (a url where nothing listens is refused before any load).
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}/`;
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const cancel = new AbortController();
    const slow = holder.client
      .callTool(
        {
          name: 'fault_run_latency_impact_scenario',
          arguments: { url: silentUrl, duration: '60s', latency: 1 },
        },
        undefined,
        { onprogress: () => running(), signal: cancel.signal },
      )
      .catch((error: unknown) => error);
    await started;
    clock += 120_000;
    const another = await connect(url, seen);
    open.push(another.client);
    await assert.rejects(
      newcomer.client.listTools(),
      /404|Session not found/,
      'the inactive newcomer made room, not the one in flight',
    );
    // One in flight, one holding a proxy: every session busy, a fixed hint.
    const second = (await another.client.callTool({
      name: 'fault_proxy_start',
      arguments: { proxies: ['0=127.0.0.1:9'] },
    })) as CallToolResult;
    clock += 120_000;
    await assert.rejects(connect(url, seen), /Too many active sessions/);
    assert.equal(seen.retryAfter.at(-1), '10', 'every session busy: a fixed hint');
    // Cancelling it ends it, and the session is still there.
    cancel.abort();
    assert.match(String(await slow), /abort/i);
    assert.ok((await holder.client.listTools()).tools.length > 0);
    await another.client.callTool({
      name: 'fault_proxy_stop',
      arguments: { id: (second.structuredContent as { id: string }).id },
    });
  } finally {
    await Promise.all(open.map((client) => client.close().catch(() => undefined)));
    await running.close();
    for (const socket of silentSockets) socket.destroy();
    silent.close();
  }
});

test('a client that closes without DELETE (its GET stream dropped) makes room at once', async () => {
  const running = await serveHttp({
    host: '127.0.0.1',
    port: 0,
    log: silentLogger,
    maxSessions: 1,
    newSession: () => createServer(makeConfig()),
  });
  const seen: Seen = { statuses: new Map(), retryAfter: [] };
  try {
    const url = new URL(running.url);
    const first = await connect(url, seen);
    await first.client.listTools();
    await first.client.close();
    const second = await connect(url, seen);
    assert.ok((await second.client.listTools()).tools.length > 0);
    await second.client.close();
    assert.equal(seen.statuses.get(503) ?? 0, 0);
  } finally {
    await running.close();
  }
});

test(
  "a DELETE is answered and the session's GET stream left for its " +
    'client to drop, so it never reconnects with the dead id',
  async () => {
    // The SDK client reconnects a GET stream that ends (after a second): were the stream ended by
    // the server, a client whose event loop turn outlasts that second reconnects with the session
    // id it has just terminated and is told "session not found". Raw sockets: what the client sees
    // is what the server wrote, in the order it wrote it.
    const servers: McpServer[] = [];
    const running = await serveHttp({
      host: '127.0.0.1',
      port: 0,
      log: silentLogger,
      newSession: () => {
        const created = createServer(makeConfig());
        servers.push(created.mcp);
        return created;
      },
    });
    try {
      const port = Number(new URL(running.url).port);
      for (let round = 0; round < 3; round++) {
        const sessionId = await initializeRaw(running.url);
        const head = (method: string): string =>
          `${method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: ` +
          `text/event-stream\r\nMcp-Session-Id: ` +
          `${sessionId}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n`;
        const seen: string[] = [];
        const stream = await rawExchange(port, head('GET'), /^HTTP\/1\.1 200/, /\r\n0\r\n\r\n$/, () =>
          seen.push('stream ended'),
        );
        const answer = await rawExchange(port, head('DELETE'), undefined, /^HTTP\/1\.1 200/, () =>
          seen.push('DELETE answered'),
        );
        await answer.done;
        // A request after it is answered (the session is gone) while the stream is still open.
        assert.equal(await deleteSession(running.url, sessionId, '2025-06-18'), 404);
        assert.deepEqual(seen, ['DELETE answered'], `round ${round}`);
        assert.equal(servers[round]!.isConnected(), true);
        // The client drops its stream: the session's server is closed.
        stream.socket.destroy();
        await stream.done;
        while (servers[round]!.isConnected()) await new Promise((resolve) => setImmediate(resolve));
      }
      // An unsupported protocol version is refused without ending the session; it ends once.
      const sessionId = await initializeRaw(running.url);
      const statuses = [];
      for (const version of ['1999-01-01', '2025-06-18', '2025-06-18'])
        statuses.push(await deleteSession(running.url, sessionId, version));
      assert.deepEqual(statuses, [400, 200, 404]);
    } finally {
      await running.close();
    }
  },
);

async function initializeRaw(url: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  });
  await response.text();
  return response.headers.get('mcp-session-id')!;
}

async function deleteSession(url: string, sessionId: string, version: string): Promise<number> {
  const response = await fetch(url, {
    method: 'DELETE',
    headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': version },
  });
  await response.text();
  return response.status;
}

/**
 * Writes a raw HTTP request on its own connection; resolves once the response so far matches
 * `opened` (when given). `done` settles when the connection closes; `onFinished` is called the
 * moment the response matches `finished`.
 */
async function rawExchange(
  port: number,
  request: string,
  opened: RegExp | undefined,
  finished: RegExp,
  onFinished: () => void,
): Promise<{ socket: Socket; done: Promise<void> }> {
  const socket = connectSocket(port);
  let received = '';
  let open!: () => void;
  const isOpen = new Promise<void>((resolve) => (open = resolve));
  const done = new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (!opened || opened.test(received)) open();
      if (finished.test(received)) {
        onFinished();
        socket.destroy();
      }
    });
  });
  socket.write(request);
  if (opened) await Promise.race([isOpen, done]);
  return { socket, done };
}
