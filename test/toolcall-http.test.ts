/**
 * The streamable-HTTP proxy in front of our own SDK-built HTTP server, driven by the official SDK
 * client: SSE replies, notifications, session headers, DELETE, JSON replies, faults, /metrics.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { startHttpProxy } from '../src/toolcall/http-proxy.js';
import { targetLookup } from '../src/target-policy.js';
import { ToolPlane } from '../src/toolcall/session.js';
import { renderReport, type Slis } from '../src/toolcall/metrics.js';
import { validatePlan } from '../src/toolcall/plan.js';
import { startTargetHttp, type TargetHttp } from './helpers/mcp-target.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

async function setup(plan: unknown, options: { json?: boolean } = {}) {
  const target: TargetHttp = await startTargetHttp(options);
  const plane = new ToolPlane(validatePlan(plan));
  const proxy = await startHttpProxy({ plane, upstream: target.url, lookup: targetLookup(false) });
  // Resolved when the client's GET stream is open through the proxy: the proxy flushes the stream's head right
  // before it joins the session's streams, so from then on what the proxy adds to the session reaches the client.
  let getStreamOpened: () => void = () => undefined;
  const getStreamOpen = new Promise<void>((resolve) => (getStreamOpened = resolve));
  const transport = new StreamableHTTPClientTransport(new URL(proxy.url), {
    requestInit: { headers: { Authorization: 'Bearer t0ken' } },
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (init?.method === 'GET' && response.ok) getStreamOpened();
      return response;
    },
  });
  const client = new Client({ name: 'toolcall-http-test', version: '0' });
  await client.connect(transport);
  await client.listTools();
  return {
    target,
    plane,
    proxy,
    client,
    transport,
    getStreamOpen,
    async close() {
      await client.close();
      await proxy.close();
      await target.close();
    },
  };
}

const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

test(
  'SSE replies, their notifications and the session headers survive ' + 'the proxy; DELETE reaches the server',
  async () => {
    const s = await setup({ faults: [] });
    try {
      const logs: string[] = [];
      s.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
      const result = await s.client.callTool({ name: 'chatty', arguments: {} });
      assert.equal(text(result), 'done');
      assert.deepEqual(logs, ['working']);
      const items = await s.client.callTool({ name: 'get_items', arguments: { count: 3 } });
      assert.deepEqual(items.structuredContent, { items: [1, 2, 3], total: 3 });
      const sessionId = s.transport.sessionId;
      assert.ok(sessionId);
      const later = s.target.seen.filter((h) => h[':method'] === 'POST').slice(1);
      assert.ok(later.length >= 2);
      for (const headers of later) {
        assert.equal(headers['mcp-session-id'], sessionId);
        assert.equal(headers.authorization, 'Bearer t0ken');
        assert.ok(headers['mcp-protocol-version'], 'MCP-Protocol-Version forwarded');
      }
      await s.transport.terminateSession();
      assert.ok(s.target.seen.some((h) => h[':method'] === 'DELETE' && h['mcp-session-id'] === sessionId));
    } finally {
      await s.close();
    }
  },
);

test(
  'faults act on what the HTTP client receives: latency, ' + 'schema_drift, drop_tool, list_changed over SSE',
  async () => {
    const s = await setup({
      faults: [
        { type: 'latency', tools: ['echo'], added_ms: 250 },
        { type: 'schema_drift', tools: ['get_items'] },
        { type: 'drop_tool', tools: ['delete_record'] },
        { type: 'list_changed', tools: ['slow'], after_calls: 2 },
      ],
    });
    try {
      let notified = 0;
      s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (notified += 1));
      const start = performance.now();
      assert.equal(text(await s.client.callTool({ name: 'echo', arguments: { text: 'a' } })), 'a');
      assert.ok(performance.now() - start >= 240);
      await assert.rejects(
        s.client.callTool({ name: 'get_items', arguments: { count: 2 } }),
        /output schema|structured content/i,
      );
      const names = (await s.client.listTools()).tools.map((t) => t.name);
      assert.ok(!names.includes('delete_record'));
      await s.client.callTool({ name: 'echo', arguments: { text: 'b' } });
      assert.equal(notified, 1);
      assert.ok(!(await s.client.listTools()).tools.some((t) => t.name === 'slow'));
      const dropped = (await s.client.callTool({ name: 'delete_record', arguments: { id: '1' } })) as CallToolResult;
      assert.equal(dropped.isError, true);
    } finally {
      await s.close();
    }
    const slis = s.plane.slis();
    assert.equal(slis.calls, 4);
    assert.equal(slis.schema_conformance, 0.75);
  },
);

test('JSON replies (no SSE) work too, and /metrics and /healthz answer', async () => {
  const s = await setup({ faults: [{ type: 'error_injection', rate: 1, tools: ['echo'] }] }, { json: true });
  try {
    const failed = (await s.client.callTool({ name: 'echo', arguments: { text: 'a' } })) as CallToolResult;
    assert.equal(failed.isError, true);
    assert.equal(text(failed), 'injected error');
    const items = await s.client.callTool({ name: 'get_items', arguments: { count: 2 } });
    assert.deepEqual(items.structuredContent, { items: [1, 2], total: 2 });
    const base = s.proxy.url.replace(/\/mcp$/, '');
    assert.deepEqual(await (await fetch(`${base}/healthz`)).json(), { status: 'ok' });
    const metrics = (await (await fetch(`${base}/metrics`)).json()) as { calls: number; tcsr: number };
    assert.equal(metrics.calls, 2);
    assert.equal(metrics.tcsr, 0.5);
  } finally {
    await s.close();
  }
});

test('the proxy binds to loopback by default and answers 502 when the upstream is down', async () => {
  const plane = new ToolPlane(validatePlan({}));
  const proxy = await startHttpProxy({ plane, upstream: 'http://127.0.0.1:9/mcp', lookup: targetLookup(false) });
  try {
    assert.match(proxy.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    // An unreachable upstream is a 502 with a JSON-RPC error naming the cause, never a crash.
    const reply = await fetch(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    assert.equal(reply.status, 502);
    assert.match(
      ((await reply.json()) as { error: { message: string } }).error.message,
      /faultline toolcall: .*ECONNREFUSED/,
    );
    // A GET stream or a DELETE to a dead upstream is the upstream's failure too, not the proxy's.
    assert.equal((await fetch(proxy.url, { headers: { accept: 'text/event-stream' } })).status, 502);
    assert.equal((await fetch(proxy.url, { method: 'DELETE' })).status, 502);
    assert.equal(plane.internalErrors, 0);
    assert.equal(plane.upstreamFailure?.kind, 'unreachable');
  } finally {
    await proxy.close();
  }
});

test(
  'an upstream that goes away mid-run: the calls it could not take ' +
    'count as unanswered at once, and the report says so',
  async () => {
    const s = await setup({ faults: [] }, { json: true });
    try {
      assert.equal(text(await s.client.callTool({ name: 'echo', arguments: { text: 'a' } })), 'a');
      await s.target.close(); // the server dies; the client keeps calling
      for (const word of ['b', 'c'])
        await assert.rejects(s.client.callTool({ name: 'echo', arguments: { text: word } }), /could not be reached/);
      const base = s.proxy.url.replace(/\/mcp$/, '');
      // /metrics at once, not only when the session ends: the client has already seen both fail.
      const metrics = (await (await fetch(`${base}/metrics`)).json()) as Slis;
      assert.equal(metrics.calls, 3);
      assert.equal(metrics.availability, 0.3333);
      assert.equal(metrics.internal_errors, 0, 'a dead upstream is not a proxy internal error');
      assert.equal(metrics.upstream_failure?.kind, 'unreachable');
      assert.equal(metrics.upstream_failure?.attempts_before, 1);
      assert.equal(metrics.upstream_failure?.unanswered, 2);
      assert.match(metrics.upstream_failure?.error ?? '', /ECONNREFUSED/);
      assert.match(
        renderReport(metrics),
        /\*\*The upstream server could not be reached\*\* from .* after 1 tool-call attempt; 2 attempts found no server/,
      );
    } finally {
      await s.client.close();
      await s.proxy.close();
    }
  },
);

test(
  'an upstream that goes away and comes back: the report says when ' +
    'it failed and when it recovered, and counts both kinds of call',
  async () => {
    const s = await setup({ faults: [] }, { json: true });
    const port = Number(new URL(s.target.url).port);
    let again: TargetHttp | undefined;
    let later: Client | undefined;
    const base = s.proxy.url.replace(/\/mcp$/, '');
    const metrics = async (): Promise<Slis> => (await (await fetch(`${base}/metrics`)).json()) as Slis;
    try {
      assert.equal(text(await s.client.callTool({ name: 'echo', arguments: { text: 'a' } })), 'a');
      await s.target.close();
      for (const word of ['b', 'c'])
        await assert.rejects(s.client.callTool({ name: 'echo', arguments: { text: word } }), /could not be reached/);
      const down = await metrics();
      assert.equal(down.upstream_failure?.recovered_at, undefined);
      assert.match(renderReport(down), /still unreachable at the end/);

      // The server comes back on the same address; an agent reconnects (its old session died with the server).
      again = await startTargetHttp({ json: true, port });
      later = new Client({ name: 'toolcall-http-test', version: '0' });
      await later.connect(new StreamableHTTPClientTransport(new URL(s.proxy.url)));
      for (const word of ['d', 'e'])
        assert.equal(text(await later.callTool({ name: 'echo', arguments: { text: word } })), word);
      const up = await metrics();
      assert.equal(up.calls, 5);
      assert.equal(up.availability, 0.6); // a, d, e answered; b, c found no server
      const failure = up.upstream_failure!;
      assert.equal(failure.kind, 'unreachable');
      assert.equal(failure.attempts_before, 1);
      assert.equal(failure.unanswered, 2, 'the calls that found no upstream');
      assert.equal(failure.reached, 2, 'the calls that reached it after it recovered');
      assert.equal(failure.outage_count, 1);
      assert.ok(failure.recovered_at !== undefined && failure.recovered_at >= failure.at, JSON.stringify(failure));
      assert.deepEqual(failure.outages, [
        { from: failure.at, to: failure.recovered_at, error: failure.error, unanswered: 2 },
      ]);
      const report = renderReport(up);
      assert.match(
        report,
        /\*\*The upstream server could not be reached\*\* from \S+ to \S+ \(.*ECONNREFUSED.*\), first after 1 tool-call attempt; 2 attempts found no server/,
      );
      assert.match(report, /\*\*It recovered\*\* at \S+: 2 tool-call attempts reached it after its first failure\./);
      assert.doesNotMatch(report, /still unreachable/);

      // It goes away a second time: a second outage, still going on at the end.
      await again.close();
      await assert.rejects(later.callTool({ name: 'echo', arguments: { text: 'f' } }), /could not be reached/);
      const twice = (await metrics()).upstream_failure!;
      assert.equal(twice.outage_count, 2);
      assert.equal(twice.recovered_at, undefined);
      assert.equal(twice.unanswered, 3);
      assert.equal(twice.outages?.[1]?.unanswered, 1);
      assert.match(
        renderReport(await metrics()),
        /could not be reached\*\* 2 times: from \S+ to \S+; from \S+ \(last error: .*\).* It was still unreachable at the end \(2 tool-call attempts reached it between outages\)\./,
      );
    } finally {
      await s.client.close();
      await later?.close().catch(() => undefined);
      await s.proxy.close();
      await again?.close().catch(() => undefined);
    }
  },
);

for (const form of ['sse', 'json'] as const) {
  test(
    `an upstream that drops the connection mid-answer (${form}): the ` +
      `call counts as found no server, not as a proxy internal error`,
    async () => {
      const { createServer } = await import('node:http');
      const upstream = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          const message = JSON.parse(body) as { id?: number; method?: string };
          if (message.method === 'initialize') {
            res.writeHead(200, { 'content-type': 'application/json' }).end(
              JSON.stringify({
                jsonrpc: '2.0',
                id: message.id,
                result: {
                  protocolVersion: '2025-06-18',
                  capabilities: { tools: {} },
                  serverInfo: { name: 'dropper', version: '1' },
                },
              }),
            );
          } else if (message.method === 'tools/call') {
            // Starts the answer, then the connection goes.
            res.writeHead(200, { 'content-type': form === 'sse' ? 'text/event-stream' : 'application/json' });
            res.write(form === 'sse' ? ': starting\n\n' : '{"jsonrpc":"2.0",');
            setTimeout(() => req.socket.destroy(), 30);
          } else res.writeHead(202).end();
        });
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      const plane = new ToolPlane(validatePlan({}));
      const proxy = await startHttpProxy({
        plane,
        upstream: `http://127.0.0.1:${(upstream.address() as import('node:net').AddressInfo).port}/mcp`,
        lookup: targetLookup(false),
      });
      try {
        const post = (message: unknown): Promise<Response> =>
          fetch(proxy.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify(message),
          });
        assert.equal(
          (
            await post({
              jsonrpc: '2.0',
              id: 1,
              method: 'initialize',
              params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
            })
          ).status,
          200,
        );
        const reply = await post({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'echo', arguments: {} },
        });
        const body = await reply.text().catch(() => '');
        if (form === 'json') {
          assert.equal(reply.status, 502);
          assert.match(body, /dropped the connection mid-answer/);
        }
        const metrics = (await (await fetch(proxy.url.replace(/\/mcp$/, '/metrics'))).json()) as Slis;
        assert.equal(metrics.calls, 1, 'recorded at once, not left pending');
        assert.equal(metrics.availability, 0);
        assert.equal(metrics.internal_errors, 0, "the upstream's failure, not the proxy's");
        assert.equal(metrics.upstream_failure?.kind, 'unreachable');
        assert.equal(metrics.upstream_failure?.unanswered, 1);
        assert.match(metrics.upstream_failure?.error ?? '', /dropped mid-answer/);
      } finally {
        await proxy.close();
        upstream.closeAllConnections();
        await new Promise((resolve) => upstream.close(resolve));
      }
    },
  );
}

test(
  'a client that hangs up on a hung call (no cancel notice) has the ' + 'call counted unanswered at once in /metrics',
  async () => {
    const target = await startTargetHttp({ json: true });
    const plane = new ToolPlane(validatePlan({ faults: [{ type: 'timeout', tools: ['echo'], probability: 1 }] }));
    const proxy = await startHttpProxy({ plane, upstream: target.url, lookup: targetLookup(false) });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    try {
      const init = await fetch(proxy.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
        }),
      });
      const session = init.headers.get('mcp-session-id')!;
      await init.text();
      const withSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
      await (
        await fetch(proxy.url, {
          method: 'POST',
          headers: withSession,
          body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        })
      ).text();
      const gaveUp = new AbortController();
      const call = fetch(proxy.url, {
        method: 'POST',
        headers: withSession,
        signal: gaveUp.signal,
        body: '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}',
      });
      setTimeout(() => gaveUp.abort(), 200);
      await assert.rejects(call);
      const metricsUrl = proxy.url.replace(/\/mcp$/, '/metrics');
      let metrics: Slis | undefined;
      for (let i = 0; i < 100 && (metrics?.calls ?? 0) === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        metrics = (await (await fetch(metricsUrl)).json()) as Slis;
      }
      assert.equal(metrics?.calls, 1, 'the abandoned call is in /metrics while the proxy runs');
      assert.equal(metrics?.availability, 0);
      assert.equal(plane.records[0]?.outcome, 'no_answer');
    } finally {
      await proxy.close();
      await target.close();
    }
  },
);

test(
  'faultline mcp-chaos proxy http refuses a non-loopback --host ' +
    'without --allow-non-loopback-bind, and a metadata --upstream',
  async () => {
    const { spawnSync } = await import('node:child_process');
    const { cliPath } = await import('./helpers/repo.js');
    const run = (args: string[]) =>
      spawnSync(process.execPath, [cliPath, 'mcp-chaos', 'proxy', 'http', '--port', '0', ...args], {
        encoding: 'utf8',
        timeout: HANG_GUARD_MS,
      });
    const exposed = run(['--upstream', 'http://127.0.0.1:9/mcp', '--host', '0.0.0.0']);
    assert.equal(exposed.status, 2, exposed.stderr);
    assert.match(exposed.stderr, /--host 0\.0\.0\.0: the proxy listens only on loopback .* --allow-non-loopback-bind/);
    const metadata = run(['--upstream', 'http://169.254.169.254/mcp']);
    assert.equal(metadata.status, 2, metadata.stderr);
    assert.match(metadata.stderr, /--upstream: 169\.254\.169\.254 is a link-local or cloud metadata address/);
  },
);

test(
  'faultline mcp-chaos proxy http: listens on loopback, answers ' + '/healthz, prints the report on SIGTERM',
  async () => {
    const { spawn } = await import('node:child_process');
    const { cliPath } = await import('./helpers/repo.js');
    const target = await startTargetHttp();
    const proxy = spawn(
      process.execPath,
      [cliPath, 'mcp-chaos', 'proxy', 'http', '--upstream', target.url, '--port', '0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let stdout = '';
    proxy.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proxy.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    try {
      const end = Date.now() + HANG_GUARD_MS;
      while (!/listening on (\S+)/.test(stderr) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
      const url = /listening on (\S+)/.exec(stderr)![1]!;
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = new Client({ name: 'cli-http', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      await client.listTools();
      assert.equal(text(await client.callTool({ name: 'echo', arguments: { text: 'via cli' } })), 'via cli');
      await client.close();
      assert.deepEqual(await (await fetch(url.replace(/\/mcp$/, '/healthz'))).json(), { status: 'ok' });
    } finally {
      proxy.kill('SIGTERM');
      await new Promise((resolve) => proxy.once('close', resolve));
      await target.close();
    }
    assert.match(stdout, /tool calls \(logical\) \/ attempts \/ tasks \| 1 \/ 1 \/ 1/);
  },
);

test('with JSON replies, list_changed reaches the client on its GET stream (passed through the proxy)', async () => {
  const s = await setup({ faults: [{ type: 'list_changed', tools: ['slow'], after_calls: 1 }] }, { json: true });
  try {
    let notified = 0;
    s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (notified += 1));
    let open = false;
    void s.getStreamOpen.then(() => (open = true));
    const end = Date.now() + HANG_GUARD_MS;
    while (!open && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.ok(open, "the client's GET stream opened through the proxy");
    await s.client.callTool({ name: 'echo', arguments: { text: 'a' } });
    await s.client.callTool({ name: 'echo', arguments: { text: 'b' } });
    const until = Date.now() + HANG_GUARD_MS;
    while (notified === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.equal(notified, 1);
  } finally {
    await s.close();
  }
});

test(
  'head_of_line_blocking over HTTP: a fast call queued behind a ' + 'slow one answers after it, its wait journalled',
  async () => {
    for (const json of [false, true]) {
      const s = await setup({ faults: [{ type: 'head_of_line_blocking', slots: 1 }] }, { json });
      try {
        const order: string[] = [];
        const seen = s.target.seen.length;
        const slow = s.client.callTool({ name: 'slow', arguments: { ms: 400 } }).then((r) => order.push(text(r)));
        while (s.target.seen.length === seen) await new Promise((resolve) => setTimeout(resolve, 5)); // the slow call holds the slot
        const fast = s.client.callTool({ name: 'echo', arguments: { text: 'fast' } }).then((r) => order.push(text(r)));
        await Promise.all([slow, fast]);
        assert.deepEqual(order, ['slept 400', 'fast'], 'the fast call waited for the slot the slow one held');
        const echo = s.plane.records.find((r) => r.tool === 'echo')!;
        assert.equal(echo.fault, 'head_of_line_blocking');
        assert.ok(
          echo.queued_ms > 0 && echo.queued_ms <= echo.latency_ms,
          `queued ${echo.queued_ms} of ${echo.latency_ms} ms`,
        );
        const metrics = (await (await fetch(s.proxy.url.replace(/\/mcp$/, '/metrics'))).json()) as Slis;
        assert.equal(metrics.queueing.queued_attempts, 1);
        assert.equal(metrics.injected.head_of_line_blocking, 1);
        assert.match(renderReport(metrics), /\| head-of-line waits \(attempts \/ mean \/ p95 \/ max\) \| 1 \/ /);
      } finally {
        await s.close();
      }
    }
  },
);

/** A bare upstream answering tools/call per `arguments.kind` (deep or big), as JSON or as SSE (`arguments.sse`). */
async function hostileUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number; params?: { arguments?: { kind?: string; sse?: boolean } } };
      const args = m.params?.arguments ?? {};
      const payload =
        args.kind === 'deep'
          ? `{"jsonrpc":"2.0","id":${m.id},"result":{"content":[{"type":"text","text":"d"}],"structuredContent":{"v":${'['.repeat(6000)}${']'.repeat(6000)}}}}`
          : JSON.stringify({
              jsonrpc: '2.0',
              id: m.id,
              result: { content: [{ type: 'text', text: args.kind === 'big' ? 'b'.repeat(200_000) : 'small' }] },
            });
      if (args.sse)
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\nid: e1\ndata: ${payload}\n\n`);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test(
  'HTTP: a reply nested 6,000 levels or past the size bound never ' +
    'crashes the proxy; fail-safe relays it, strict answers an error',
  async () => {
    const upstream = await hostileUpstream();
    const post = (url: string, id: number, args: Record<string, unknown>): Promise<Response> =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't', arguments: args } }),
      });
    try {
      for (const strict of [false, true]) {
        const plane = new ToolPlane(validatePlan({ faults: [{ type: 'partial_result' }] }), {
          strict,
          maxMessageChars: 64 * 1024,
        });
        const proxy = await startHttpProxy({ plane, upstream: upstream.url, lookup: targetLookup(false) });
        try {
          for (const sse of [false, true]) {
            const deep = await (await post(proxy.url, 1, { kind: 'deep', sse })).text();
            if (strict)
              assert.match(
                deep,
                /"id":1,"error":\{"code":-32603,"message":"faultline toolcall: the server's answer could not be read: JSON nested deeper than 512 levels"/,
              );
            else
              assert.ok(deep.includes('"structuredContent":{"v":[[[[') && deep.length > 12_000, 'relayed as it came');
            const big = await (await post(proxy.url, 2, { kind: 'big', sse })).text();
            if (strict || sse)
              assert.match(
                big,
                /"id":2,"error":\{"code":-32603,"message":"faultline toolcall: the server's answer could not be (read|relayed): (a reply|an event) of more than/,
              );
            else assert.ok(big.includes('b'.repeat(200_000)), 'a JSON reply past the bound is streamed through whole');
            const small = await (await post(proxy.url, 3, { kind: 'small', sse })).text();
            assert.match(
              small,
              /"id":3,"result":\{"content":\[\{"type":"text","text":"sm"\}\]\}/,
              'the next call goes through the plan as usual',
            );
          }
          assert.equal(plane.records.length, 6);
          assert.equal(plane.internalErrors, 4, 'each answer the proxy could not read');
        } finally {
          await proxy.close();
        }
      }
    } finally {
      await upstream.close();
    }
  },
);
