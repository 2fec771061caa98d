/**
 * The five fault_run_*_impact_scenario tools end to end through MCP (in-memory transport, the
 * real server) against a local app on loopback: each fault moves the measured numbers the way
 * it should, and the markdown report shows exactly the JSON result's numbers.
 *
 * Each run is short (1 s of load, twice with a baseline). Held here: what a busy machine cannot
 * change (a delay never shortens a request, the faults' own counters, rates never over their
 * cap); how far each fault moves the numbers against the baseline is bench/checks/scenario.ts's
 * (scenario.fault-effects), with the thresholds these tests had.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ScenarioResult } from '../src/scenario/index.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { closedPort, heldResources, startServer, type TestServer } from './fixtures/load/servers.js';
import { GENERATOR_BEHIND, LOOSE_SLOS, startApp, startAppCallingUpstream } from './fixtures/scenario/app.js';
import { assertReportMatchesJson, PERCENTILE_HEADER, tableRows } from './fixtures/scenario/report-tables.js';
import { connect } from 'node:net';

let app: TestServer;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;
const servers: TestServer[] = [];

before(async () => {
  app = await startApp();
  servers.push(app);
  mcp = await connectInMemory();
});
after(async () => {
  await mcp.close();
  await Promise.all(servers.map((server) => server.close()));
});

async function runTool(
  name: string,
  args: Record<string, unknown>,
): Promise<{ report: string; result: ScenarioResult }> {
  const response = (await mcp.client.callTool({ name, arguments: { seed: 7, ...args } })) as CallToolResult;
  assert.notEqual(response.isError, true, textOf(response));
  const result = response.structuredContent as unknown as ScenarioResult;
  const report = textOf(response);
  assertReportMatchesJson(report, result);
  return { report, result };
}

describe('fault_run_*_impact_scenario through MCP', () => {
  test('latency: the percentiles shift by about the injected delay against the baseline', async () => {
    const held = await heldResources(servers);
    const { report, result } = await runTool('fault_run_latency_impact_scenario', {
      url: `${app.origin}/ok`,
      duration: '1s',
      num_clients: 10,
      rps: 5,
      latency: 100,
      baseline: true,
      slos: LOOSE_SLOS,
    });
    const base = result.baseline!.load!;
    const run = result.run.load!;
    assert.equal(base.requests, 50);
    assert.equal(run.requests, 50);
    assert.equal(run.errors, 0);
    // Deviation 0: every response waits the full 100 ms in the proxy, so none can be faster.
    assert.ok(run.latency!.min >= 99.5, `fastest request ${run.latency!.min} ms`);
    assert.ok(run.serviceTime!.min >= 99.5, `fastest service time ${run.serviceTime!.min} ms`);
    assert.equal(result.run.proxy.faults[0]!.delayAddedMs, 100 * run.responses);
    // The impact table is the difference of the two phases' figures.
    const p50Row = result.impact.find((row) => row.metric === 'p50 latency')!;
    assert.equal(p50Row.change, run.latency!.p50 - base.latency!.p50);
    assert.equal(result.run.proxy.faults[0]!.applications, run.responses);
    // The warm requests before each phase's clock went through no fault and are in no figure; the report says so.
    assert.equal(run.warmRequests, 20);
    assert.equal(base.warmRequests, 20);
    assert.match(report, /Before the first measured request, 20 unmeasured requests/);
    assert.equal(result.passed, true);
    assert.match(report, /### Impact against the baseline/);
    assert.deepEqual(await heldResources(servers), held);
  });

  test('jitter: the spread widens', async () => {
    const { result } = await runTool('fault_run_jitter_impact_scenario', {
      url: `${app.origin}/ok`,
      duration: '1s',
      num_clients: 10,
      rps: 5,
      amplitude: 80,
      frequency: 20,
      baseline: true,
    });
    // Uniform delays in [0, 80] ms, redrawn 20 times a second: the requests of one run spread over
    // most of that range (p95 − p25 widening by ~56 ms against the baseline: bench/checks/scenario.ts).
    assert.ok(result.run.load!.latency!.max - result.run.load!.latency!.min > 30);
    const counters = result.run.proxy.faults[0]!;
    assert.ok(
      counters.delayAddedMs > 0 && counters.delayAddedMs <= counters.applications * 80,
      `${counters.delayAddedMs} ms over ${counters.applications} delays`,
    );
    assert.equal(result.baseline!.proxy.faults.length, 0, 'no jitter in the baseline');
  });

  test('packet loss: the tail latency rises on multi-segment responses', async () => {
    const { result } = await runTool('fault_run_packet_loss_impact_scenario', {
      url: `${app.origin}/bytes/65536`,
      duration: '1s',
      num_clients: 10,
      rps: 3,
      loss_rate: 0.1,
      baseline: true,
    });
    const run = result.run.load!.latency!;
    const counters = result.run.proxy.faults[0]!;
    assert.ok(counters.segments >= 30 * 45, `segments seen ${counters.segments}`);
    assert.ok(
      counters.segmentsLost > 0 && counters.stallMs > 0,
      `lost ${counters.segmentsLost}, stalled ${counters.stallMs} ms`,
    );
    // The slowest request waited out at least one stall (how far the tail and the mean rise
    // against the baseline is bench/checks/scenario.ts's).
    assert.ok(
      run.max >= counters.stallMs / counters.applications,
      `slowest ${run.max} ms, stalls ${counters.stallMs} ms over ${counters.applications}`,
    );
    assert.equal(result.run.load!.errors, 0, 'loss delays, it never corrupts or drops');
  });

  test('bandwidth: a download takes about size / rate', async () => {
    const rate = 200_000; // 200 kbps = 200,000 bytes/s, fault's byte units
    const serviceTime = async (bytes: number): Promise<number> => {
      const { result } = await runTool('fault_run_bandwidth_impact_scenario', {
        url: `${app.origin}/bytes/${bytes}`,
        duration: '1s',
        num_clients: 4,
        rps: 1,
        rate: rate / 1000,
        unit: 'kbps',
        timeout: 5,
      });
      assert.equal(result.run.load!.errors, 0);
      assert.ok(result.run.proxy.faults[0]!.bytesPaced >= bytes * 4);
      return result.run.load!.serviceTime!.p50;
    };
    const small = await serviceTime(40_000);
    const large = await serviceTime(120_000);
    // Never much faster than the rate allows, however fast the machine (how close to size / rate,
    // and 3× the bytes 2–4× as long, is bench/checks/scenario.ts's).
    for (const [measured, bytes] of [
      [small, 40_000],
      [large, 120_000],
    ] as const) {
      const expected = (bytes / rate) * 1000;
      assert.ok(measured > expected * 0.7, `${bytes} bytes took ${measured} ms, expected about ${expected} ms`);
    }
  });

  test('blackhole with timeout 1: every request times out and the run fails its SLOs', async () => {
    const { report, result } = await runTool('fault_run_blackhole_impact_scenario', {
      url: `${app.origin}/ok`,
      duration: '1s',
      num_clients: 5,
      rps: 2,
      timeout: 1,
      slos: ['99% @ 350ms', '95% @ 200ms', 'errors < 1%'],
    });
    const load = result.run.load!;
    assert.equal(load.requests, 10);
    assert.equal(load.errors, 10);
    assert.equal(load.errorsByClass.timeout, 10);
    assert.equal(load.responses, 0);
    // Timeouts enter the distribution at exactly the timeout.
    assert.equal(load.latency!.min, 1000);
    assert.equal(load.latency!.max, 1000);
    assert.equal(result.passed, false);
    assert.equal(result.run.passed, false);
    assert.deepEqual(
      result.run.slos.map((slo) => slo.pass),
      [false, false, false],
    );
    assert.match(report, /\| timeout \| 10 \| 100\.0% \|/);
    assert.deepEqual(
      tableRows(report, PERCENTILE_HEADER).map((row) => row[1]),
      ['1000.00', '1000.00', '1000.00', '1000.00', '1000.00'],
    );
  });

  test(
    'a fault window: active over the second half only, in the ' + 'timeline, the window figures and the report',
    async () => {
      const { report, result } = await runTool('fault_run_latency_impact_scenario', {
        url: `${app.origin}/ok`,
        duration: '2s',
        num_clients: 4,
        rps: 5,
        latency: 80,
        fault_start: '50%',
      });
      const load = result.run.load!;
      assert.deepEqual([result.fault.startMs, result.fault.endMs], [1000, 2000]);
      assert.deepEqual(
        load.timeline.map((second) => [second.second, second.requests, second.faultActive]),
        [
          [0, 20, false],
          [1, 20, true],
        ],
      );
      // (That second 0 is not delayed, p50 ~1 ms, is bench/checks/scenario.ts's: a loaded machine
      // sends some of its requests late, into the fault, and their latency counts from when they were due.)
      assert.ok(load.timeline[1]!.p50Ms! >= 79.5, `during the fault: p50 ${load.timeline[1]!.p50Ms} ms`);
      assert.equal(load.duringFault!.requests, 20);
      assert.ok(load.duringFault!.latency!.min >= 79.5);
      assert.match(report, /^\| latency \| 0% `\.\.\.\.\.xxxxx` 100% \| Latency: /m);
      assert.match(report, /^\| 1 \| 20 \| [\d.]+ \| [\d.]+ \| 0 \| yes \|$/m);
    },
  );

  test(
    'HTTP 5xx answers are errors (fault counted none), so are ' +
      'statuses outside expect_status; an error SLO sees them',
    async () => {
      const args = { duration: '500ms', num_clients: 2, rps: 10, latency: 1, slos: ['errors < 5%'] };
      const failing = await runTool('fault_run_latency_impact_scenario', { url: `${app.origin}/status/503`, ...args });
      const load = failing.result.run.load!;
      assert.equal(load.errors, 10);
      assert.equal(load.errorsByClass.http_5xx, 10);
      assert.deepEqual(load.statusCodes, { '503': 10 });
      assert.equal(failing.result.passed, false);
      // Run Overview: 10 errors, and 10 expectation failures (statuses outside expect_status), not fault's hard-coded 0.
      assert.match(failing.report, /^\| 10 \| 10 \(100\.0%\) \| [\d.]+ \| [\d.]+ \| [\d.]+ \| 10 \|/m);
      // A 404 is outside the default expect_status (2xx, 3xx): a mistyped path fails the gate, and the
      // report's first lines say which status and what to check.
      const notFound = await runTool('fault_run_latency_impact_scenario', { url: `${app.origin}/status/404`, ...args });
      assert.equal(notFound.result.run.load!.errors, 10);
      assert.equal(notFound.result.run.load!.errorsByClass.http_status, 10);
      assert.equal(notFound.result.verdict, 'failed');
      assert.match(
        notFound.report.split('\n').slice(0, 6).join('\n'),
        /404 × 10: is the url \(path and method\) right\?/,
      );
      // Expected, it is a plain response again.
      const expected = await runTool('fault_run_latency_impact_scenario', {
        url: `${app.origin}/status/404`,
        ...args,
        expect_status: '200-299,404',
        slos: LOOSE_SLOS,
      });
      assert.equal(expected.result.run.load!.errors, 0);
      assert.equal(expected.result.verdict, 'passed');
      assert.equal(expected.result.passed, true);
    },
  );

  test(
    'https url: TLS stays end to end through the proxy; insecure_tls ' + 'accepts a self-signed certificate',
    async () => {
      const tlsApp = await startServer(undefined, { tls: true });
      servers.push(tlsApp);
      const { result } = await runTool('fault_run_latency_impact_scenario', {
        url: `${tlsApp.origin}/`,
        duration: '500ms',
        num_clients: 2,
        rps: 10,
        latency: 30,
        insecure_tls: true,
      });
      assert.deepEqual(result.run.load!.statusCodes, { '200': 10 });
      assert.ok(result.run.load!.latency!.min >= 29.5);
      const verified = await runTool('fault_run_latency_impact_scenario', {
        url: `${tlsApp.origin}/`,
        duration: '200ms',
        num_clients: 1,
        rps: 10,
        latency: 1,
      });
      assert.equal(
        verified.result.run.load!.errors,
        verified.result.run.load!.requests,
        'the certificate is verified by default',
      );
      // The reasons say what to do, not only OpenSSL's code in the error details.
      assert.equal(verified.result.verdict, 'failed');
      assert.match(
        verified.result.verdictReasons.join('\n'),
        /the load refused the target's TLS certificate \([A-Z_]+ × 2\): for a self-signed or private-CA certificate, pass insecure_tls: true/,
      );
    },
  );

  test(
    'redirects count as success by default but are not followed: the ' +
      'reasons say the load timed the redirect itself',
    async () => {
      const args = { duration: '500ms', num_clients: 1, rps: 10, latency: 1, slos: LOOSE_SLOS };
      const { result, report } = await runTool('fault_run_latency_impact_scenario', {
        url: `${app.origin}/status/302`,
        ...args,
      });
      assert.deepEqual(result.run.load!.statusCodes, { '302': 5 });
      assert.equal(result.verdict, 'passed');
      assert.match(
        result.verdictReasons[0]!,
        /^302 × 5: a redirect, counted as success \(expect_status 2xx,3xx\) but not followed: the load timed the redirect itself, not the page it points to/,
      );
      assert.match(report.split('\n').slice(0, 4).join('\n'), /Verdict: Passed\*\* — 302 × 5: a redirect/);
      // With 3xx left out of expect_status they are errors, with the usual status hint only.
      const strict = await runTool('fault_run_latency_impact_scenario', {
        url: `${app.origin}/status/302`,
        ...args,
        expect_status: '2xx',
      });
      assert.equal(strict.result.verdict, 'failed');
      assert.ok(
        !strict.result.verdictReasons.some((reason) => /a redirect, counted as success/.test(reason)),
        strict.result.verdictReasons.join(' | '),
      );
      // A 304 is not a redirect to follow: no such reason.
      const notModified = await runTool('fault_run_latency_impact_scenario', {
        url: `${app.origin}/status/304`,
        ...args,
      });
      // Nothing but what a loaded machine may add (the generator's own lateness, load/generator-behind.ts).
      assert.deepEqual(
        notModified.result.verdictReasons.filter((reason) => !GENERATOR_BEHIND.test(reason)),
        [],
      );
    },
  );

  test("proxies: the fault applies to the app's outbound calls through the mapped port", async () => {
    const upstream = await startApp();
    servers.push(upstream);
    const proxyPort = await closedPort();
    const caller = await startAppCallingUpstream(proxyPort);
    servers.push(caller);
    const { result } = await runTool('fault_run_latency_impact_scenario', {
      url: `${caller.origin}/`,
      duration: '1s',
      num_clients: 5,
      rps: 4,
      latency: 100,
      proxies: [`${proxyPort}=127.0.0.1:${upstream.port}`],
    });
    const load = result.run.load!;
    assert.equal(result.routedThroughProxy, false);
    assert.deepEqual(result.run.proxyPorts, [proxyPort]);
    assert.equal(load.errors, 0);
    assert.equal(load.statusCodes['200'], 20);
    assert.ok(load.latency!.min >= 99.5, `fastest request ${load.latency!.min} ms`);
    // The load goes straight to the app: no warm requests (they would reach the app and its dependency).
    assert.equal(load.warmRequests, 0);
    assert.equal(upstream.arrivals.length, 20, 'every request made one upstream call');
    assert.ok(result.run.proxy.mappings[0]!.connections > 0);
    // The mapped port is closed again once the tool answered.
    await assert.rejects(
      new Promise<void>((resolve, reject) => {
        const socket = connect(proxyPort, '127.0.0.1', () => {
          socket.destroy();
          resolve();
        });
        socket.once('error', reject);
      }),
      { code: 'ECONNREFUSED' },
    );
  });
});
