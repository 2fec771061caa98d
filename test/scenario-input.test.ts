/**
 * Bad arguments to the scenario tools, through MCP: each is an isError result whose text names
 * the argument, returned before any load is sent (the app below counts every request it gets,
 * and must get none). Limits and the local-target rule are checked the same way.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig } from '../src/config.js';
import { DEFAULT_MAX_CONNECTIONS, openFileLimit, RESERVED_FDS } from '../src/load/index.js';
import { scenarioFromArguments } from '../src/scenario/index.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { heldResources, type TestServer } from './fixtures/load/servers.js';
import { startApp } from './fixtures/scenario/app.js';

let app: TestServer;
let url: string;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;

before(async () => {
  app = await startApp();
  url = `${app.origin}/ok`;
  mcp = await connectInMemory(makeConfig({ scenario: { maxDurationMs: 60_000, maxRatePerSecond: 1000 } }));
});
after(async () => {
  await mcp.close();
  await app.close();
});

const LATENCY = 'fault_run_latency_impact_scenario';

/** The refusal's text. Up front: the app gets no request (the last test); how fast is bench/checks/scenario.ts's. */
async function refusal(tool: string, args: Record<string, unknown>): Promise<string> {
  const result = (await mcp.client.callTool({ name: tool, arguments: args })) as CallToolResult;
  assert.equal(result.isError, true, `expected an error for ${JSON.stringify(args)}, got a report`);
  assert.equal(result.structuredContent, undefined);
  return textOf(result);
}

describe('scenario tool arguments are checked before any traffic', () => {
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    ['non-http url', LATENCY, { url: 'ftp://127.0.0.1/file' }, 'url'],
    ['not a url', LATENCY, { url: 'localhost:8080' }, 'url'],
    ['rps 0', LATENCY, { rps: 0 }, 'rps'],
    ['rps < 0', LATENCY, { rps: -5 }, 'rps'],
    ['num_clients 0', LATENCY, { num_clients: 0 }, 'num_clients'],
    ['num_clients < 0', LATENCY, { num_clients: -1 }, 'num_clients'],
    ['duration 0', LATENCY, { duration: '0s' }, 'duration'],
    ['duration negative', LATENCY, { duration: '-1s' }, 'duration'],
    ['duration unparsable', LATENCY, { duration: 'soon' }, 'duration'],
    ['timeout 0', LATENCY, { timeout: 0 }, 'timeout'],
    ['timeout < 0', LATENCY, { timeout: -1 }, 'timeout'],
    ['deviation < 0', LATENCY, { latency: 100, deviation: -1 }, 'deviation'],
    ['unknown direction', LATENCY, { direction: 'sideways' }, 'direction'],
    ['unknown side', 'fault_run_jitter_impact_scenario', { side: 'middle' }, 'side'],
    ['unknown unit', 'fault_run_bandwidth_impact_scenario', { rate: 10, unit: 'furlongs' }, 'unit'],
    ['bandwidth rate 0', 'fault_run_bandwidth_impact_scenario', { rate: 0 }, 'rate'],
    ['jitter frequency 0', 'fault_run_jitter_impact_scenario', { frequency: 0 }, 'frequency'],
    ['loss_rate over 1', 'fault_run_packet_loss_impact_scenario', { loss_rate: 1.5 }, 'loss_rate'],
    ['unknown loss model', 'fault_run_packet_loss_impact_scenario', { model: 'random' }, 'model'],
    ['malformed proxy mapping', LATENCY, { proxies: ['8080'] }, 'proxies'],
    ['proxy mapping with a bad port', LATENCY, { proxies: ['0=127.0.0.1:70000'] }, 'proxies'],
    ['duration over the limit', LATENCY, { duration: '2m' }, 'duration'],
    ['rate over the limit', LATENCY, { num_clients: 50, rps: 21 }, 'num_clients × rps'],
    ['fault_start after the end', LATENCY, { duration: '1s', fault_start: '2s' }, 'fault_start'],
    ['fault_start at the end', LATENCY, { duration: '1s', fault_start: '100%' }, 'fault_start'],
    ['fault_duration 0', LATENCY, { fault_duration: '0s' }, 'fault_duration'],
    ['a bad SLO string', LATENCY, { slos: ['99% @ 350ms', 'fast please'] }, 'slos[1]'],
    ['an SLO at 100%', LATENCY, { slos: ['100% @ 350ms'] }, 'slos[0]'],
    ['a bad header', LATENCY, { headers: ['no colon here'] }, 'headers[0]'],
    ['a header value with CR LF', LATENCY, { headers: ['Accept: */*', 'X-A: b\r\nX-Injected: 1'] }, 'headers[1]'],
    ['a bad method', LATENCY, { method: 'GET /' }, 'method'],
  ];
  for (const [what, tool, args, argument] of cases) {
    test(what, async () => {
      const text = await refusal(tool, { url, ...args });
      assert.ok(text.includes(argument), `"${text}" does not name ${argument}`);
    });
  }

  test('limits name the flag that raises them', async () => {
    assert.match(await refusal(LATENCY, { url, duration: '2m' }), /--max-duration/);
    assert.match(await refusal(LATENCY, { url, num_clients: 50, rps: 21 }), /--max-rate/);
  });

  test('a run that schedules less than one request is refused (it would report ten times the rate asked)', async () => {
    assert.match(
      await refusal(LATENCY, { url, duration: '100ms', num_clients: 1, rps: 1 }),
      /^duration × num_clients × rps schedules 0\.1 requests, less than one/,
    );
    const { runOpenLoop } = await import('../src/load/index.js');
    await assert.rejects(
      runOpenLoop({ url, ratePerSecond: 1, connections: 1, durationMs: 500, timeoutMs: 1000 }),
      /ratePerSecond × durationMs schedules 0\.5 requests, less than one/,
    );
  });

  test('a public url is refused before any packet is sent', async () => {
    for (const target of ['http://8.8.8.8/', 'https://[2001:4860:4860::8888]/', 'http://[::ffff:8.8.8.8]/']) {
      const text = await refusal(LATENCY, { url: target });
      assert.match(text, /^url: .* not a loopback address/);
      assert.match(text, /--allow-targets/);
    }
  });

  test('a mapped port already in use', async () => {
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as { port: number }).port;
    try {
      const held = await heldResources([app]);
      const text = await refusal(LATENCY, { url, proxies: [`${port}=127.0.0.1:${app.port}`], baseline: true });
      assert.match(text, /proxies/);
      assert.match(text, new RegExp(`${port}.*already in use`));
      assert.deepEqual(await heldResources([app]), held);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  test('nothing reached the app', () => {
    assert.equal(app.arrivals.length, 0);
  });
});

describe('limits raised by the server configuration', () => {
  test('a longer duration and a higher rate are accepted when the limits allow them', async () => {
    const limits = { allowRemoteTargets: false, maxDurationMs: 20 * 60_000, maxRatePerSecond: 20_000 };
    const spec = await scenarioFromArguments('latency', { url, duration: '15m', num_clients: 100, rps: 150 }, limits);
    assert.equal(spec.durationMs, 15 * 60_000);
    assert.equal(spec.clients * spec.rps, 15_000);
  });

  test(
    'max_connections defaults to rate × timeout, at most ' + 'DEFAULT_MAX_CONNECTIONS; a larger one can be asked for',
    async () => {
      const limits = { allowRemoteTargets: false, maxDurationMs: 60_000, maxRatePerSecond: 20_000 };
      // 20 req/s × 10 s: every request may hold its connection to its timeout.
      assert.equal(
        (await scenarioFromArguments('latency', { url, num_clients: 10, rps: 2 }, limits)).maxConnections,
        200,
      );
      // 1,000 req/s × 10 s would be 10,000: capped (each is three sockets through the proxy).
      assert.equal(
        (await scenarioFromArguments('latency', { url, num_clients: 10, rps: 100 }, limits)).maxConnections,
        DEFAULT_MAX_CONNECTIONS,
      );
      assert.ok(DEFAULT_MAX_CONNECTIONS < 10_000);
      // Never fewer than num_clients, and the cap is a default only (when the file-descriptor limit
      // allows more: three sockets per connection through the proxy).
      const fdLimit = openFileLimit();
      if (fdLimit === undefined || (fdLimit - RESERVED_FDS) / 3 >= 1500) {
        assert.equal(
          (await scenarioFromArguments('latency', { url, num_clients: 1200, rps: 1, timeout: 0.5 }, limits))
            .maxConnections,
          1200,
        );
        assert.equal(
          (await scenarioFromArguments('latency', { url, num_clients: 10, rps: 100, max_connections: 1500 }, limits))
            .maxConnections,
          1500,
        );
      }
    },
  );

  test('remote targets pass the check only when allowed (no traffic is sent here)', async () => {
    const remote = { allowRemoteTargets: true, maxDurationMs: 60_000, maxRatePerSecond: 100 };
    const spec = await scenarioFromArguments('blackhole', { url: 'http://8.8.8.8/' }, remote);
    assert.equal(spec.url, 'http://8.8.8.8/');
  });

  test('defaults: only url is needed', async () => {
    const spec = await scenarioFromArguments('latency', { url }, makeConfig().scenario);
    assert.equal(spec.durationMs, 10_000);
    assert.equal(spec.clients, 10);
    assert.equal(spec.rps, 2);
    assert.equal(spec.timeoutMs, 10_000);
    assert.deepEqual(
      spec.slos.map((slo) => slo.title),
      ['99% @ 350ms', '95% @ 200ms', 'errors < 1%'],
    );
    assert.equal(spec.faultStartMs, 0);
    assert.equal(spec.faultEndMs, 10_000);
  });
});
