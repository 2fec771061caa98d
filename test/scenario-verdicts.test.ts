/**
 * Verdicts you can trust, each case a user met once as a regression test
 * against real local servers: a fault that never touched the traffic is inconclusive, not passed;
 * the guide's 1 client × 3 rps × 300 ms payload is measured without the generator queueing;
 * a capacity run is held to --max-rate; connection counts beyond the file-descriptor limit are
 * refused naming the argument; a blackhole to the end is reported as the client saw it; enum
 * arguments take any case. No absolute time is asserted: latencies are compared with the delay
 * the fault adds, with tolerances for a busy machine.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig } from '../src/config.js';
import { renderReport } from '../src/report/markdown.js';
import { runScenario, scenarioFromArguments, type ScenarioResult } from '../src/scenario/index.js';
import { runOpenLoop } from '../src/load/index.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { cliPath } from './helpers/repo.js';
import { closedPort, startServer, type TestServer } from './fixtures/load/servers.js';
import { GENERATOR_BEHIND, LOOSE_SLOS, startApp, startAppCallingUpstream } from './fixtures/scenario/app.js';

const limits = makeConfig().scenario;

/** scenarioFromArguments with SLOs a busy machine cannot fail, unless the test names its own. */
const scenario = (
  fault: Parameters<typeof scenarioFromArguments>[0],
  args: Parameters<typeof scenarioFromArguments>[1],
  scenarioLimits = limits,
) => scenarioFromArguments(fault, { slos: LOOSE_SLOS, ...args }, scenarioLimits);
let app: TestServer;
let slow: TestServer;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;

before(async () => {
  app = await startApp();
  // Answers every request after 300 ms, like a slow dependency.
  slow = await startServer((_request, response) => void setTimeout(() => response.end('slow'), 300));
  mcp = await connectInMemory();
});
after(async () => {
  await mcp.close();
  await Promise.all([app.close(), slow.close()]);
});

/** Runs the CLI without blocking this process, which serves the app the CLI loads. */
function runCli(command: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** A scenario tool call, with SLOs a busy machine cannot fail unless the test names its own. */
async function callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await mcp.client.callTool({ name, arguments: { slos: LOOSE_SLOS, ...args } })) as CallToolResult;
}

describe('scenario verdicts', () => {
  test(
    'a mapping the app never connects to: inconclusive, and the first ' + 'lines say where to point the app',
    async () => {
      const unused = await closedPort();
      const spec = await scenario(
        'latency',
        {
          url: `${app.origin}/ok`,
          duration: '500ms',
          num_clients: 2,
          rps: 4,
          latency: 100,
          proxies: [`${unused}=127.0.0.1:${app.port}`],
        },
        limits,
      );
      const result = await runScenario(spec);
      assert.equal(result.verdict, 'inconclusive');
      assert.equal(result.passed, false);
      assert.equal(result.run.proxy.mappings[0]!.connections, 0);
      const report = renderReport(result);
      const firstLine = report.split('\n')[2]!;
      assert.match(
        firstLine,
        new RegExp(
          `^\\*\\*Verdict: Inconclusive\\*\\* — the app made no connection ` +
            `to 127\\.0\\.0\\.1:${unused} .*point its upstream at that ` +
            `address`,
        ),
      );
      assert.match(report, /\| Inconclusive$/m);
    },
  );

  test(
    'failed with a fault that never touched the traffic: the reasons ' +
      "say so, so the failure is not read as the fault's impact",
    async () => {
      // The app answers 503 by itself and never calls the mapped port: the SLO fails with no fault
      // at all. The reasons gave only the SLO, and an agent blamed the dependency's latency.
      const unused = await closedPort();
      const spec = await scenario(
        'latency',
        {
          url: `${app.origin}/status/503`,
          duration: '500ms',
          num_clients: 1,
          rps: 4,
          latency: 100,
          proxies: [`${unused}=127.0.0.1:${app.port}`],
        },
        limits,
      );
      const result = await runScenario(spec);
      assert.equal(result.verdict, 'failed');
      assert.equal(result.verdictReasons[0], 'SLO "errors < 1%" failed.');
      assert.ok(
        result.verdictReasons.some((reason) =>
          /^the app made no connection to 127\.0\.0\.1:\d+ .*point its upstream at that address/.test(reason),
        ),
        result.verdictReasons.join(' | '),
      );
    },
  );

  test('proxies: a dependency that is down is named in the reasons, not only the 502s the app answered', async () => {
    const proxyPort = await closedPort();
    let down = await closedPort();
    while (down === proxyPort) down = await closedPort();
    const caller = await startAppCallingUpstream(proxyPort);
    try {
      const spec = await scenario(
        'latency',
        {
          url: `${caller.origin}/`,
          duration: '500ms',
          num_clients: 1,
          rps: 4,
          latency: 10,
          proxies: [`${proxyPort}=127.0.0.1:${down}`],
        },
        limits,
      );
      const result = await runScenario(spec);
      assert.equal(result.verdict, 'failed');
      assert.deepEqual(result.run.load!.statusCodes, { '502': 2 });
      const reasons = result.verdictReasons.join('\n');
      assert.match(
        reasons,
        new RegExp(
          `the proxy could not connect to the app's dependency 2 times ` +
            `\\(ECONNREFUSED × 2\\), through ${proxyPort}=127\\.0\\.0\\.1:${down} ` +
            `× 2; the app saw each call as a reset`,
        ),
      );
    } finally {
      await caller.close();
    }
  });

  test('a url where nothing listens: refused before the load (nothing tested), not failed after it', async () => {
    // It ran, the proxy saw ECONNREFUSED on every connection and the verdict said an error SLO failed: the fault
    // tested nothing. scenario-trial.test.ts checks the CLI's exit 1 and the same refusal with proxies.
    const port = await closedPort();
    const spec = await scenario(
      'latency',
      { url: `http://127.0.0.1:${port}/`, duration: '300ms', num_clients: 1, rps: 10, latency: 1 },
      limits,
    );
    await assert.rejects(runScenario(spec), /nothing accepts connections at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  });

  test('an https:// url at a plain-HTTP server: refused before the load, saying it does not speak TLS', async (t) => {
    // It ran, and the verdict said "errors < 1%" failed, the cause (ERR_SSL_WRONG_VERSION_NUMBER) only deep in it.
    const plain = await startServer();
    t.after(() => plain.close());
    const spec = await scenario(
      'latency',
      { url: `https://127.0.0.1:${plain.port}/`, duration: '300ms', num_clients: 1, rps: 10, latency: 1 },
      limits,
    );
    await assert.rejects(
      runScenario(spec),
      new RegExp(
        '127\\.0\\.0\\.1:\\d+ accepts connections but does not complete a TLS handshake \\(\\S+\\): ' +
          'plain HTTP is served at http://; fix url: nothing was run',
      ),
    );
    assert.equal(plain.arrivals.length, 0, 'no load was sent');
  });

  test('an https:// url whose server resets as it opens: a reset, and start the app, not "plain HTTP"', async (t) => {
    const resetting = createNetServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
    t.after(() => resetting.close());
    const port = (resetting.address() as AddressInfo).port;
    const spec = await scenario(
      'latency',
      { url: `https://127.0.0.1:${port}/`, duration: '300ms', num_clients: 1, rps: 10, latency: 1 },
      limits,
    );
    await assert.rejects(
      runScenario(spec),
      /the connection to 127\.0\.0\.1:\d+ was reset as it opened \(ECONNRESET\); start the app, or fix url/,
    );
  });

  test('faultline run exits 4 for an inconclusive run, 3 for a failed one (a 404 from a mistyped path)', async () => {
    const unused = await closedPort();
    const common = [
      '--duration',
      '300ms',
      '--num-clients',
      '1',
      '--rps',
      '5',
      '--latency',
      '1',
      ...LOOSE_SLOS.flatMap((slo) => ['--slo', slo]),
    ];
    const inconclusive = await runCli(process.execPath, [
      cliPath,
      'run',
      'latency',
      '--url',
      `${app.origin}/ok`,
      ...common,
      '--proxy',
      `${unused}=127.0.0.1:${app.port}`,
    ]);
    assert.equal(inconclusive.status, 4, inconclusive.stderr);
    assert.match(inconclusive.stdout, /Verdict: Inconclusive/);
    const typo = await runCli(process.execPath, [cliPath, 'run', 'latency', '--url', `${app.origin}/helth`, ...common]);
    assert.equal(typo.status, 3, typo.stderr);
    assert.match(typo.stdout.split('\n').slice(0, 6).join('\n'), /404 × \d+: is the url/);
  });

  test(
    "the guide's payload shape (1 client, 300 ms latency) at 5 rps: " +
      'more connections open instead of requests queueing',
    async () => {
      // One keep-alive connection cannot carry a request every 200 ms that takes 300 ms: with a fixed
      // pool the requests queued behind it and the latency grew without bound (the trial's mean
      // 505 ms at 3 rps through its app). fault's first SLO; its second (95% @ 200ms) fails, rightly,
      // under a 300 ms delay.
      // The SLO is wider than fault's (99% @ 350ms, which bench/checks/scenario.ts holds) so a busy
      // machine cannot fail it; queueing behind one connection would still (~1.2 s by the 10th request).
      const slos = ['99% @ 1000ms', 'errors < 1%'];
      const response = await callTool('fault_run_latency_impact_scenario', {
        url: `${app.origin}/ok`,
        duration: '2s',
        num_clients: 1,
        rps: 5,
        latency: 300,
        slos,
      });
      assert.notEqual(response.isError, true, textOf(response));
      const result = response.structuredContent as unknown as ScenarioResult;
      const load = result.run.load!;
      assert.equal(load.errors, 0);
      assert.equal(load.queued, 0, 'no request waited for a connection');
      assert.ok(load.connectionsOpened >= 2, `opened ${load.connectionsOpened} connections`);
      assert.ok(load.peakBusyConnections >= 2, `peak busy ${load.peakBusyConnections}`);
      assert.ok(load.latency!.p50 >= 299.5, `p50 ${load.latency!.p50} ms`);
      assert.equal(result.verdict, 'passed');
    },
  );

  test(
    'on demand, a 300 ms server at 50 requests/s opens about rate × ' + 'service time connections, not one per request',
    async () => {
      const result = await runOpenLoop({
        url: `${slow.origin}/`,
        ratePerSecond: 50,
        connections: 1,
        maxConnections: 200,
        durationMs: 1000,
        timeoutMs: 5000,
      });
      assert.equal(result.errors, 0);
      // (No request waiting for a connection on a quiet machine is bench/checks/scenario.ts's: growth
      // is put off, by design, while the generator runs late.)
      // Little's law: 50/s × 0.3 s = 15 in flight at least; a busy machine adds more (no more than
      // 30 on a quiet one is bench/checks/scenario.ts's).
      assert.ok(result.peakBusyConnections >= 13, `peak busy ${result.peakBusyConnections}`);
      assert.ok(result.connectionsOpened >= 13, `opened ${result.connectionsOpened}`);
    },
  );

  test(
    'at the max_connections cap requests wait, and the advice names ' + 'max_connections with the right arithmetic',
    async () => {
      const spec = await scenario(
        'latency',
        { url: `${slow.origin}/`, duration: '1s', num_clients: 1, rps: 10, latency: 1, max_connections: 1 },
        limits,
      );
      const result = await runScenario(spec);
      const load = result.run.load!;
      assert.ok(load.queued > 0);
      assert.ok(load.saturation !== null);
      const report = renderReport(result);
      assert.match(report, /waited for one of the max_connections = 1 connections/);
      assert.match(report, /set max_connections to at least \d+/);
      assert.doesNotMatch(report, /raise num_clients/);
    },
  );

  test('a capacity run never sends faster than --max-rate', async () => {
    const spec = await scenario(
      'latency',
      { url: `${app.origin}/ok`, duration: '1s', num_clients: 4, latency: 0, strategy: 'CAPACITY' },
      { ...limits, maxRatePerSecond: 50 },
    );
    const result = await runScenario(spec);
    const capacity = result.run.capacity!;
    // autocannon paces each connection; a sampling tick of slack at most.
    assert.ok(
      capacity.sent <= 50 * (capacity.elapsedMs / 1000) * 1.2 + 5,
      `${capacity.sent} requests in ${capacity.elapsedMs} ms with a cap of 50/s`,
    );
  });

  test(
    'a capacity run against a server that closes its connections: ' +
      'nothing counted is inconclusive, mis-timed latencies are said',
    async () => {
      // HTTP/1.0 with the body ended by the close, as small embedded servers answer: autocannon
      // counts no response and no error, and the verdict was "failed: errors < 1%" with 0 errors.
      let answered = 0;
      const sockets = new Set<Socket>();
      const http10 = createNetServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {});
        let head = '';
        socket.on('data', (chunk: Buffer) => {
          head += chunk.toString('latin1');
          if (!head.includes('\r\n\r\n')) return;
          answered++;
          socket.end('HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello');
        });
      });
      await new Promise<void>((resolve) => http10.listen(0, '127.0.0.1', resolve));
      try {
        const port = (http10.address() as AddressInfo).port;
        const spec = await scenario(
          'latency',
          { url: `http://127.0.0.1:${port}/`, duration: '500ms', num_clients: 2, latency: 0, strategy: 'capacity' },
          { ...limits, maxRatePerSecond: 100 },
        );
        const result = await runScenario(spec);
        assert.ok(answered > 0, 'the server did answer');
        assert.equal(result.run.capacity!.sent, 0);
        assert.equal(result.verdict, 'inconclusive');
        assert.match(
          result.verdictReasons[0]!,
          /^the closed loop completed no request in 500ms \(no response, no error\): .* use strategy load/,
        );
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => http10.close(resolve));
      }
      // Connection: close on every response: counted, but autocannon's latencies are not to be trusted.
      const closing = await startServer((_request, response) => {
        response.setHeader('connection', 'close');
        response.end('ok');
      });
      try {
        const spec = await scenario(
          'latency',
          { url: `${closing.origin}/`, duration: '500ms', num_clients: 2, latency: 0, strategy: 'capacity' },
          { ...limits, maxRatePerSecond: 100 },
        );
        const result = await runScenario(spec);
        assert.ok(result.run.capacity!.sent > 0);
        assert.ok(result.run.proxy.mappings[0]!.connections > 2);
        assert.ok(
          result.verdictReasons.some((reason) =>
            /^the target closed connections \(\d+ opened for 2 clients: Connection: close or HTTP\/1\.0\): .*its latencies read too high/.test(
              reason,
            ),
          ),
          result.verdictReasons.join(' | '),
        );
      } finally {
        await closing.close();
      }
      // Kept alive: no such reason.
      const keptAlive = await runScenario(
        await scenario(
          'latency',
          { url: `${app.origin}/ok`, duration: '500ms', num_clients: 2, latency: 1, strategy: 'capacity' },
          { ...limits, maxRatePerSecond: 100 },
        ),
      );
      assert.equal(keptAlive.verdict, 'passed');
      // Nothing but what a loaded machine may add (the generator's own lateness, load/generator-behind.ts).
      assert.deepEqual(
        keptAlive.verdictReasons.filter((reason) => !GENERATOR_BEHIND.test(reason)),
        [],
      );
    },
  );

  test(
    "a capacity run's progress counts its requests and errors as they " +
      "end (autocannon's, not the open loop's counters)",
    async () => {
      const progress: string[] = [];
      const spec = await scenario(
        'latency',
        { url: `${app.origin}/status/503`, duration: '1500ms', num_clients: 2, latency: 0, strategy: 'capacity' },
        { ...limits, maxRatePerSecond: 100 },
      );
      const result = await runScenario(spec, { onProgress: (p) => progress.push(p.message) });
      const capacity = result.run.capacity!;
      assert.ok(
        capacity.sent > 0 && capacity.errors === capacity.responses,
        `${capacity.sent} sent, ${capacity.errors} errors`,
      );
      const first = /^fault: 1s\/1\.5s, (\d+) requests settled, (\d+) errors$/.exec(progress[0] ?? '');
      assert.ok(first, progress.join(' | '));
      // By 1 s of 1.5 s, some of what the run sent had ended, every one a 503, and not more than in all.
      const [settled, errors] = [Number(first[1]), Number(first[2])];
      assert.ok(settled > 0 && settled <= capacity.sent, `${settled} settled by 1s of ${capacity.sent} sent`);
      assert.equal(errors, settled);
    },
  );

  test(
    'connections beyond what the file-descriptor limit allows are ' +
      'refused before anything starts, naming the argument',
    async () => {
      const run = (flags: string) =>
        runCli('bash', [
          '-c',
          `ulimit -n 400 && exec "${process.execPath}" "${cliPath}" run ` +
            `latency --url ${app.origin}/ok --duration 1s ${flags}`,
        ]);
      const clients = await run('--num-clients 200 --rps 0.1');
      assert.equal(clients.status, 2, String(clients.stderr));
      assert.match(
        String(clients.stderr),
        /--num-clients: 200 is more than the 48 connections this run can hold \(this process may open 400 files/,
      );
      const max = await run('--num-clients 2 --max-connections 100');
      assert.equal(max.status, 2, String(max.stderr));
      assert.match(String(max.stderr), /--max-connections: 100 is more than the 48 connections/);
    },
  );

  test(
    'a blackhole to the end: every request times out, and the report ' + 'says the fault stayed on while they drained',
    async () => {
      const progress: string[] = [];
      const spec = await scenario(
        'blackhole',
        { url: `${app.origin}/ok`, duration: '500ms', num_clients: 2, rps: 4, timeout: 1.5 },
        limits,
      );
      const result = await runScenario(spec, { onProgress: (p) => progress.push(p.message) });
      const load = result.run.load!;
      assert.equal(load.errorsByClass.timeout, load.requests, 'what the client saw: every request timed out');
      assert.equal(result.fault.endMs, 500);
      // The last request was due before 500 ms and timed out 1.5 s later: the fault was on until then.
      // (Off by 2.5 s on a quiet machine: bench/checks/scenario.ts.)
      assert.ok(
        result.fault.activeUntilMs >= 1500 && result.fault.activeUntilMs <= load.elapsedMs,
        `active until ${result.fault.activeUntilMs} ms of ${load.elapsedMs}`,
      );
      assert.equal(result.verdict, 'failed');
      const report = renderReport(result);
      assert.match(
        report,
        /Fault active from 0ms to the end of the run: the load ran 500ms, and the fault stayed on while the requests still in flight settled, until 1\.\d+s/,
      );
      assert.ok(
        progress.some((message) => /draining: \d+ requests? in flight/.test(message)),
        progress.join(' | '),
      );
    },
  );

  test(
    'a fault window no request was due in: inconclusive, saying so, ' + 'and the report never claims it was active',
    async () => {
      // One request every 2 s for 2 s is due at 0 and answered at once: the load has ended long
      // before 1.5 s, so a fault from 1.5 s is never switched on. The report said "Fault active
      // from 950ms … until 502ms" and blamed the direction the fault acts on. (The margin is 1.5 s: with
      // 450 ms a loaded machine still had the request due at 500 ms in flight at 950 ms, and the fault,
      // switched on, delayed it: then it did meet a measured request, and "passed" was true.)
      const late = await runScenario(
        await scenario(
          'latency',
          { url: `${app.origin}/ok`, duration: '2s', num_clients: 1, rps: 0.5, latency: 50, fault_start: '1500ms' },
          limits,
        ),
      );
      assert.equal(late.run.load!.requests, 1);
      assert.equal(late.verdict, 'inconclusive');
      assert.equal(late.fault.switchedOn, false);
      assert.equal(late.fault.activeUntilMs, late.fault.startMs);
      assert.deepEqual(late.run.proxy.faults, [], 'the proxy never had the fault');
      assert.match(
        late.verdictReasons[0]!,
        /^the latency fault met no request: none was due in its window \(1\.5s to the end of the run; one request every 2s at 0\.5 requests\/s\), and every request had settled before it opened, so it was never switched on: start it earlier/,
      );
      const lateReport = renderReport(late);
      assert.match(lateReport, /Fault window from 1\.5s to the end of the run: never switched on/);
      assert.doesNotMatch(lateReport, /Fault active from/);
      // On, then off, between two requests (due at 0 and 2000 ms; 1 s from the first to the window): switched on,
      // met none.
      const between = await runScenario(
        await scenario(
          'latency',
          {
            url: `${app.origin}/ok`,
            duration: '4s',
            num_clients: 1,
            rps: 0.5,
            latency: 50,
            fault_start: '1s',
            fault_duration: '900ms',
          },
          limits,
        ),
      );
      assert.equal(between.verdict, 'inconclusive');
      assert.equal(between.fault.switchedOn, true);
      assert.equal(between.run.load!.duringFault!.requests, 0);
      assert.match(
        between.verdictReasons[0]!,
        /^the latency fault met no request: none was due in its window \(1s to 1\.9s; one request every 2s at 0\.5 requests\/s\): start it earlier/,
      );
      // A fault to the end of a load whose last request settled before `duration`: on until then,
      // and the report no longer says "the load ran 1s … until 502ms".
      const whole = await runScenario(
        await scenario(
          'latency',
          { url: `${app.origin}/ok`, duration: '2s', num_clients: 1, rps: 0.5, latency: 1 },
          limits,
        ),
      );
      assert.equal(whole.fault.switchedOn, true);
      assert.ok(whole.fault.activeUntilMs < 2000, `active until ${whole.fault.activeUntilMs} ms`);
      assert.match(
        renderReport(whole),
        /Fault active from 0ms to the end of the run: on until the last request settled, at \d+ms\./,
      );
    },
  );

  test('a fault that injects nothing (latency 0, jitter amplitude 0) is inconclusive, not passed', async () => {
    const args = { url: `${app.origin}/ok`, duration: '500ms', num_clients: 1, rps: 4 };
    const latency = await callTool('fault_run_latency_impact_scenario', { ...args, latency: 0 });
    const latencyResult = latency.structuredContent as unknown as ScenarioResult;
    assert.equal(latencyResult.run.load!.errors, 0);
    assert.ok(latencyResult.run.proxy.faults[0]!.applications > 0, 'it "acted", adding 0 ms');
    assert.equal(latencyResult.verdict, 'inconclusive');
    assert.match(latencyResult.verdictReasons[0]!, /^the latency fault adds nothing \(latency 0 ms, deviation 0 ms\)/);
    // A deviation alone still delays (a normal draw truncated at 0): a real fault. It acts when a draw is above 0,
    // so enough messages that all of them drawing 0 (one chance in 2^20) cannot decide the verdict.
    const deviation = (
      await callTool('fault_run_latency_impact_scenario', { ...args, rps: 20, latency: 0, deviation: 20 })
    ).structuredContent as unknown as ScenarioResult;
    assert.equal(deviation.verdict, 'passed');
    const jitter = (await callTool('fault_run_jitter_impact_scenario', { ...args, amplitude: 0 }))
      .structuredContent as unknown as ScenarioResult;
    assert.equal(jitter.verdict, 'inconclusive');
    assert.match(jitter.verdictReasons[0]!, /^the jitter fault adds nothing \(amplitude 0 ms\)/);
  });

  test(
    'an HTTP fault that changes nothing is inconclusive, not passed: delay 0 and probability 0 up front, ' +
      'a cut past the end of every body from the counters',
    async () => {
      const args = { url: `${app.origin}/bytes/11`, duration: '500ms', num_clients: 1, rps: 8 };
      const run = async (extra: Record<string, unknown>) =>
        (await callTool('fault_run_http_error_impact_scenario', { ...args, ...extra }))
          .structuredContent as unknown as ScenarioResult;
      const delay = await run({ http_fault: 'latency', delay: 0 });
      assert.equal(delay.verdict, 'inconclusive', renderReport(delay));
      assert.match(delay.verdictReasons[0]!, /^the HTTP latency fault adds nothing \(delay 0 ms\)/);
      const [delayCounters] = delay.run.proxy.httpFaults!;
      assert.equal(delayCounters!.applications, 0, 'a delay of 0 ms changed no exchange');
      assert.equal(delayCounters!.unchanged, delayCounters!.requests);
      const never = await run({ http_fault: 'error', probability: 0 });
      assert.equal(never.verdict, 'inconclusive');
      assert.match(never.verdictReasons[0]!, /^the HTTP error fault adds nothing \(probability 0\)/);
      // An 11-byte body and a cut after 100000 bytes: every request met the fault, none was cut.
      const past = await run({ http_fault: 'connection_drop', after_bytes: 100_000 });
      const report = renderReport(past);
      assert.equal(past.verdict, 'inconclusive', report);
      assert.match(
        past.verdictReasons[0]!,
        new RegExp(
          String.raw`^the HTTP connection drop fault changed no exchange \((\d+) matching requests, \1 drew it, ` +
            String.raw`0 changed\): nothing was cut: after_bytes was at or past the end of every response body`,
        ),
      );
      const [pastCounters] = past.run.proxy.httpFaults!;
      assert.ok(pastCounters!.requests > 0);
      assert.deepEqual([pastCounters!.applications, pastCounters!.unchanged], [0, pastCounters!.requests]);
      assert.equal(past.run.load!.errors, 0, 'no connection was cut');
      assert.match(report, /\| Requests met \| Changed \(applications\) \| Drawn, changed nothing \|/);
      const met = pastCounters!.requests;
      const row = `| connection_drop | connection_drop | \`load\` | ${met} | 0 | ${met} | 0 | 0 |`;
      assert.ok(report.includes(row), report);
      assert.doesNotMatch(report, /Verdict: Passed/);
      // A cut inside the body does cut: it acts on every request, and the load sees the errors.
      const inside = await run({ http_fault: 'connection_drop', after_bytes: 5 });
      const [insideCounters] = inside.run.proxy.httpFaults!;
      assert.ok(insideCounters!.applications > 0 && insideCounters!.unchanged === 0, JSON.stringify(insideCounters));
      assert.equal(inside.verdict, 'failed', renderReport(inside));
    },
  );

  test('enum arguments take any case; a url with port 0 is refused naming url', async () => {
    const ok = await callTool('fault_run_latency_impact_scenario', {
      url: `${app.origin}/ok`,
      duration: '200ms',
      num_clients: 1,
      rps: 5,
      latency: 1,
      side: 'Server',
      direction: 'INGRESS',
      distribution: 'Uniform',
    });
    assert.notEqual(ok.isError, true, textOf(ok));
    const result = ok.structuredContent as unknown as ScenarioResult;
    assert.equal((result.fault.settings as { side?: string }).side, 'server');
    const portZero = await callTool('fault_run_latency_impact_scenario', {
      url: 'http://127.0.0.1:0/',
      duration: '200ms',
    });
    assert.equal(portZero.isError, true);
    assert.match(textOf(portZero), /^url: port 0/);
  });
});
