/**
 * Scenario tools as an MCP host uses them: two at once on the same server, cancelled mid-run
 * (everything released long before the run would have ended: no socket, listener or timer left,
 * the proxy port refusing connections; within a second is bench/checks/scenario.ts's
 * scenario.cancel-release), with progress notifications, and over stdio against the built CLI.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import type { ScenarioResult } from '../src/scenario/index.js';
import { connectInMemory, connectStdio, textOf } from './helpers/mcp.js';
import { closedPort, heldResources, type TestServer } from './fixtures/load/servers.js';
import { startApp, startAppCallingUpstream } from './fixtures/scenario/app.js';
import { assertReportMatchesJson } from './fixtures/scenario/report-tables.js';

/** How long cleanup after a cancel may take here: far less than the 10 s runs cancelled below would last. */
const CANCEL_LIMIT_MS = 5000;

let app: TestServer;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;
const servers: TestServer[] = [];
/** What the process holds with the test servers up and no scenario running. */
let idle: Awaited<ReturnType<typeof resources>>;

before(async () => {
  app = await startApp();
  servers.push(app);
  mcp = await connectInMemory();
  idle = await resources();
});
after(async () => {
  await mcp.close();
  await Promise.all(servers.map((server) => server.close()));
});

/** Sockets, timers and listening sockets beyond the test servers' own. */
async function resources(): Promise<{ sockets: number; timers: number; listeners: number }> {
  const listeners = process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap').length - servers.length;
  return { ...(await heldResources(servers)), listeners };
}

const isIdle = async (): Promise<boolean> => JSON.stringify(await resources()) === JSON.stringify(idle);

/** Polls until `done()` holds; returns how long that took (or throws after `limitMs`). */
async function waitUntil(done: () => boolean | Promise<boolean>, limitMs: number, what: string): Promise<number> {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > limitMs)
      throw new Error(`${what}: not within ${limitMs} ms (${JSON.stringify(await resources())})`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - started;
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('scenario tools under an MCP host', () => {
  test('two scenarios at once on the same server both complete, each with its own proxy and fault', async () => {
    const call = (name: string, args: Record<string, unknown>) =>
      mcp.client.callTool({
        name,
        arguments: { url: `${app.origin}/ok`, duration: '1s', num_clients: 4, rps: 5, seed: 3, ...args },
      }) as Promise<CallToolResult>;
    const [latency, jitter] = await Promise.all([
      call('fault_run_latency_impact_scenario', { latency: 60 }),
      call('fault_run_jitter_impact_scenario', { amplitude: 30, frequency: 10 }),
    ]);
    for (const response of [latency, jitter]) {
      assert.notEqual(response.isError, true, textOf(response));
      const result = response.structuredContent as unknown as ScenarioResult;
      assert.equal(result.run.load!.requests, 20);
      assert.equal(result.run.load!.errors, 0);
      assertReportMatchesJson(textOf(response), result);
    }
    const [a, b] = [latency, jitter].map((response) => response.structuredContent as unknown as ScenarioResult);
    assert.notEqual(a!.run.proxyPorts[0], b!.run.proxyPorts[0]);
    assert.equal(a!.run.proxy.faults[0]!.type, 'latency');
    assert.equal(b!.run.proxy.faults[0]!.type, 'jitter');
    assert.ok(a!.run.load!.latency!.min >= 59.5, `latency run's fastest request ${a!.run.load!.latency!.min} ms`);
  });

  test('a cancelled blackhole scenario releases every socket, listener and timer', async (t) => {
    // The previous test's sockets close a moment after it ended.
    await waitUntil(isIdle, 15_000, 'idle before the run');
    const controller = new AbortController();
    const arrivals = app.arrivals.length;
    const call = mcp.client.callTool(
      {
        name: 'fault_run_blackhole_impact_scenario',
        // direction ingress: the answers held, the requests of connections already open reaching the
        // app (by default a blackhole holds both). It starts after 1 s: a connection opened under a
        // blackhole is never dialled, so the app would see nothing to hold.
        arguments: {
          url: `${app.origin}/ok`,
          duration: '10s',
          num_clients: 4,
          rps: 5,
          timeout: 5,
          direction: 'ingress',
          fault_start: '1s',
        },
      },
      undefined,
      { signal: controller.signal },
    );
    const settled = call.then(
      () => 'answered',
      () => 'rejected',
    );
    // Load is flowing (the blackhole holds the responses, the requests still reach the app).
    await waitUntil(() => app.arrivals.length >= arrivals + 4, 15_000, 'requests reaching the app');
    assert.notDeepEqual(await resources(), idle, 'the run holds sockets while it is running');
    controller.abort();
    assert.equal(await settled, 'rejected');
    const took = await waitUntil(isIdle, CANCEL_LIMIT_MS, 'resources released');
    t.diagnostic(`released ${took.toFixed(1)} ms after the cancel`);
  });

  test('a cancelled scenario with a mapped port: the port refuses connections', async (t) => {
    const upstream = await startApp();
    servers.push(upstream);
    const proxyPort = await closedPort();
    const caller = await startAppCallingUpstream(proxyPort);
    servers.push(caller);
    // The previous test's sockets close a moment after it ended.
    await waitUntil(isIdle, 15_000, 'idle before the run');
    const controller = new AbortController();
    const call = mcp.client.callTool(
      {
        name: 'fault_run_latency_impact_scenario',
        arguments: {
          url: `${caller.origin}/`,
          duration: '10s',
          num_clients: 4,
          rps: 5,
          latency: 200,
          baseline: true,
          proxies: [`${proxyPort}=127.0.0.1:${upstream.port}`],
        },
      },
      undefined,
      { signal: controller.signal },
    );
    const settled = call.then(
      () => 'answered',
      () => 'rejected',
    );
    await waitUntil(() => upstream.arrivals.length >= 4, 15_000, 'upstream calls through the proxy');
    assert.equal(await refuses(proxyPort), false, 'the mapped port is listening during the run');
    const cancelledAt = performance.now();
    controller.abort();
    assert.equal(await settled, 'rejected');
    await waitUntil(() => refuses(proxyPort), CANCEL_LIMIT_MS, 'the mapped port refusing');
    await waitUntil(isIdle, CANCEL_LIMIT_MS, 'resources released');
    t.diagnostic(
      `port refusing and resources released ${(performance.now() - cancelledAt).toFixed(1)} ms after the cancel`,
    );
  });

  test('progress notifications arrive about once a second, increasing, up to the total', async () => {
    const progress: Progress[] = [];
    const response = (await mcp.client.callTool(
      {
        name: 'fault_run_latency_impact_scenario',
        arguments: { url: `${app.origin}/ok`, duration: '1500ms', num_clients: 2, rps: 5, latency: 10, baseline: true },
      },
      undefined,
      { onprogress: (update) => progress.push(update) },
    )) as CallToolResult;
    assert.notEqual(response.isError, true, textOf(response));
    assert.ok(progress.length >= 2, `${progress.length} progress notifications over 3 s of load`);
    // Each phase counts duration + timeout (10 s by default): the most it can last, draining included.
    for (const [index, update] of progress.entries()) {
      assert.equal(update.total, 2 * (1500 + 10_000));
      assert.ok(update.progress <= update.total!);
      if (index > 0) assert.ok(update.progress > progress[index - 1]!.progress);
      assert.match(
        update.message ?? '',
        /^(baseline|fault): (\d+s\/1\.5s, \d+ requests settled, \d+ errors, \d+ connections|draining: \d+ requests? in flight .*|done)$/,
      );
    }
    // Each phase ends at its full share, so a client's bar reaches its end.
    assert.deepEqual(
      progress.filter((update) => update.message?.endsWith(': done')).map((update) => update.progress),
      [1500 + 10_000, 2 * (1500 + 10_000)],
    );
  });
});

describe('over stdio (the built CLI)', () => {
  test('a latency scenario, then a cancelled one, through a real MCP client and child process', async (t) => {
    const session = await connectStdio();
    try {
      const response = (await session.client.callTool({
        name: 'fault_run_latency_impact_scenario',
        arguments: { url: `${app.origin}/ok`, duration: '1s', num_clients: 5, rps: 4, latency: 50, seed: 11 },
      })) as CallToolResult;
      assert.notEqual(response.isError, true, textOf(response));
      const result = response.structuredContent as unknown as ScenarioResult;
      assert.equal(result.run.load!.requests, 20);
      assert.ok(result.run.load!.latency!.min >= 49.5);
      assertReportMatchesJson(textOf(response), result);

      const upstream = await startApp();
      servers.push(upstream);
      const proxyPort = await closedPort();
      const caller = await startAppCallingUpstream(proxyPort);
      servers.push(caller);
      const controller = new AbortController();
      const cancelled = session.client
        .callTool(
          {
            name: 'fault_run_latency_impact_scenario',
            arguments: {
              url: `${caller.origin}/`,
              duration: '10s',
              num_clients: 2,
              rps: 5,
              latency: 20,
              proxies: [`${proxyPort}=127.0.0.1:${upstream.port}`],
            },
          },
          undefined,
          { signal: controller.signal },
        )
        .then(
          () => 'answered',
          () => 'rejected',
        );
      await waitUntil(() => upstream.arrivals.length >= 2, 15_000, 'upstream calls through the proxy');
      const cancelledAt = performance.now();
      controller.abort();
      assert.equal(await cancelled, 'rejected');
      await waitUntil(() => refuses(proxyPort), CANCEL_LIMIT_MS, 'the mapped port refusing');
      t.diagnostic(
        `the child closed the mapped port ${(performance.now() - cancelledAt).toFixed(1)} ms after the cancel`,
      );

      // The server is still healthy after the cancel, and stdout carried nothing but JSON-RPC.
      const { tools } = await session.client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'fault_run_blackhole_impact_scenario'));
      for (const line of session.stdoutLines())
        assert.doesNotThrow(() => JSON.parse(line), `stdout line: ${line.slice(0, 80)}`);
    } finally {
      await session.close();
    }
  });
});
