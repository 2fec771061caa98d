/**
 * Timing checks of the scenario tools (src/scenario) through MCP and the module API: how much each
 * fault moves the measured numbers against a baseline of the same run, how soon a cancel releases
 * everything, what the once-per-process warm-up costs and saves. The tests (scenario-tools,
 * scenario-verdicts, scenario-lifecycle, scenario-warm-up, scenario-cancel-warm-up,
 * scenario-input) hold the behaviour with lower bounds and counts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig } from '../../src/config.js';
import { runOpenLoop } from '../../src/load/index.js';
import { runScenario, scenarioFromArguments, type ScenarioResult } from '../../src/scenario/index.js';
import { warmUpOnce } from '../../src/scenario/warm-up.js';
import { proxyThreadResources } from '../../src/proxy-host/index.js';
import { closedPort, heldResources, startServer, type TestServer } from '../../test/fixtures/load/servers.js';
import { startApp, startAppCallingUpstream } from '../../test/fixtures/scenario/app.js';
import { connectInMemory, connectStdio, textOf } from '../../test/helpers/mcp.js';
import { median, type BenchCheck, type Row } from '../lib/check.js';
import { serve } from '../servers.js';

type Session = Awaited<ReturnType<typeof connectInMemory>>;

async function runTool(mcp: Session, name: string, args: Record<string, unknown>): Promise<ScenarioResult> {
  const response = (await mcp.client.callTool({ name, arguments: { seed: 7, ...args } })) as CallToolResult;
  if (response.isError) throw new Error(`${name}: ${textOf(response)}`);
  return response.structuredContent as unknown as ScenarioResult;
}

/** Polls `done` every 5 ms; returns how long it took, or throws after `limitMs`. */
async function waitUntil(done: () => boolean | Promise<boolean>, limitMs: number, what: string): Promise<number> {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
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

const faultEffects: BenchCheck = {
  name: 'scenario.fault-effects',
  measures:
    "how far each fault moves a scenario's numbers against its own " +
    'baseline phase, through MCP: latency 100 ms, jitter 80 ms, ' +
    'packet loss 10% on 64 KiB responses, bandwidth 200 kB/s on 40 ' +
    'and 120 kB downloads, a latency window over the second half',
  peer: "the same run's baseline phase (or size ÷ rate for bandwidth)",
  target:
    'latency p50, p95 and service p50 shift 80–160 ms; jitter widens ' +
    'p95 − p25 by over 20 ms; loss raises p95 by over 40 ms and the ' +
    'mean by over 20; a download takes 0.7–1.6 × size ÷ rate and 3× ' +
    'the bytes 2–4× as long; p50 before a latency window under 40 ms',
  tests: ['test/scenario-tools.test.ts'],
  timeoutMs: 180_000,
  async run() {
    const app = await startApp();
    const mcp = await connectInMemory();
    const rows: Row[] = [];
    try {
      const latency = await runTool(mcp, 'fault_run_latency_impact_scenario', {
        url: `${app.origin}/ok`,
        duration: '1s',
        num_clients: 10,
        rps: 5,
        latency: 100,
        baseline: true,
      });
      for (const [label, ours, peer] of [
        ['latency p50', latency.run.load!.latency!.p50, latency.baseline!.load!.latency!.p50],
        ['latency p95', latency.run.load!.latency!.p95, latency.baseline!.load!.latency!.p95],
        ['service time p50', latency.run.load!.serviceTime!.p50, latency.baseline!.load!.serviceTime!.p50],
      ] as const) {
        rows.push({
          label: `latency 100 ms: ${label}`,
          ours: { label: 'fault', value: ours, unit: 'ms' },
          peer: { label: 'baseline', value: peer, unit: 'ms' },
          target: { on: 'difference', atLeast: 80, atMost: 160 },
        });
      }
      const spread = (phase: ScenarioResult['run']): number => phase.load!.latency!.p95 - phase.load!.latency!.p25;
      const jitter = await runTool(mcp, 'fault_run_jitter_impact_scenario', {
        url: `${app.origin}/ok`,
        duration: '1s',
        num_clients: 10,
        rps: 5,
        amplitude: 80,
        frequency: 20,
        baseline: true,
      });
      rows.push({
        label: 'jitter 80 ms: p95 − p25',
        ours: { label: 'fault', value: spread(jitter.run), unit: 'ms' },
        peer: { label: 'baseline', value: spread(jitter.baseline!), unit: 'ms' },
        target: { on: 'difference', atLeast: 20 },
      });
      const loss = await runTool(mcp, 'fault_run_packet_loss_impact_scenario', {
        url: `${app.origin}/bytes/65536`,
        duration: '1s',
        num_clients: 10,
        rps: 3,
        loss_rate: 0.1,
        baseline: true,
      });
      rows.push(
        {
          label: 'loss 10%: p95',
          ours: { label: 'fault', value: loss.run.load!.latency!.p95, unit: 'ms' },
          peer: { label: 'baseline', value: loss.baseline!.load!.latency!.p95, unit: 'ms' },
          target: { on: 'difference', atLeast: 40 },
        },
        {
          label: 'loss 10%: mean',
          ours: { label: 'fault', value: loss.run.load!.latency!.mean, unit: 'ms' },
          peer: { label: 'baseline', value: loss.baseline!.load!.latency!.mean, unit: 'ms' },
          target: { on: 'difference', atLeast: 20 },
        },
      );
      const rate = 200_000;
      const download = async (bytes: number): Promise<number> =>
        (
          await runTool(mcp, 'fault_run_bandwidth_impact_scenario', {
            url: `${app.origin}/bytes/${bytes}`,
            duration: '1s',
            num_clients: 4,
            rps: 1,
            rate: rate / 1000,
            unit: 'kbps',
            timeout: 5,
          })
        ).run.load!.serviceTime!.p50;
      const small = await download(40_000);
      const large = await download(120_000);
      rows.push(
        {
          label: 'bandwidth: 40 kB',
          ours: { label: 'took', value: small, unit: 'ms' },
          peer: { label: 'size ÷ rate', value: (40_000 / rate) * 1000, unit: 'ms' },
          target: { on: 'ratio', atLeast: 0.7, atMost: 1.6 },
        },
        {
          label: 'bandwidth: 120 kB',
          ours: { label: 'took', value: large, unit: 'ms' },
          peer: { label: 'size ÷ rate', value: (120_000 / rate) * 1000, unit: 'ms' },
          target: { on: 'ratio', atLeast: 0.7, atMost: 1.6 },
        },
        {
          label: 'bandwidth: 3× the bytes',
          ours: { label: '120 kB', value: large, unit: 'ms' },
          peer: { label: '40 kB', value: small, unit: 'ms' },
          target: { on: 'ratio', atLeast: 2, atMost: 4 },
        },
      );
      const window = await runTool(mcp, 'fault_run_latency_impact_scenario', {
        url: `${app.origin}/ok`,
        duration: '2s',
        num_clients: 4,
        rps: 5,
        latency: 80,
        fault_start: '50%',
      });
      rows.push({
        label: 'window: second 0 p50',
        ours: { label: 'before the fault', value: window.run.load!.timeline[0]!.p50Ms!, unit: 'ms' },
        target: { on: 'value', atMost: 40 },
      });
    } finally {
      await mcp.close();
      await app.close();
    }
    return rows;
  },
};

const slowDependency: BenchCheck = {
  name: 'scenario.slow-dependency',
  measures:
    'one client at 5 requests/s under a 300 ms latency fault for 2 s ' +
    '(latency p50 and p99); the connections the open-loop generator ' +
    'opens against a 300 ms server at 50 requests/s; how long a ' +
    "blackhole run's fault stays on after a 500 ms load with a 1.5 s " +
    'timeout',
  peer:
    "the 300 ms delay; Little's law (50/s × 0.3 s = 15 in flight); " +
    "the last request's timeout, ~1.5–2 s into the run",
  target:
    'p50 under 360 ms and p99 under 350 ms; at most 30 connections ' +
    'and no request waiting for one; the fault off before 2.5 s',
  tests: ['test/scenario-verdicts.test.ts'],
  async run() {
    const app = await startApp();
    const slow: TestServer = await startServer(
      (_request, response) => void setTimeout(() => response.end('slow'), 300),
    );
    const limits = makeConfig().scenario;
    try {
      const delayed = (
        await runScenario(
          await scenarioFromArguments(
            'latency',
            { url: `${app.origin}/ok`, duration: '2s', num_clients: 1, rps: 5, latency: 300 },
            limits,
          ),
        )
      ).run.load!;
      const onDemand = await runOpenLoop({
        url: `${slow.origin}/`,
        ratePerSecond: 50,
        connections: 1,
        maxConnections: 200,
        durationMs: 1000,
        timeoutMs: 5000,
      });
      const blackhole = await runScenario(
        await scenarioFromArguments(
          'blackhole',
          { url: `${app.origin}/ok`, duration: '500ms', num_clients: 2, rps: 4, timeout: 1.5 },
          limits,
        ),
      );
      return [
        {
          label: '300 ms fault: p50',
          ours: { label: 'p50', value: delayed.latency!.p50, unit: 'ms' },
          peer: { label: 'asked', value: 300, unit: 'ms' },
          target: { on: 'difference', atMost: 59.9 },
        },
        {
          label: '300 ms fault: p99',
          ours: { label: 'p99', value: delayed.latency!.p99, unit: 'ms' },
          peer: { label: 'asked', value: 300, unit: 'ms' },
          target: { on: 'difference', atMost: 49.9 },
        },
        {
          label: 'on demand, 300 ms server',
          ours: { label: 'opened', value: onDemand.connectionsOpened, unit: 'connections' },
          peer: { label: 'in flight by Little', value: 15, unit: 'connections' },
          target: { on: 'value', atMost: 30 },
        },
        {
          label: 'on demand: requests that waited',
          ours: { label: 'queued', value: onDemand.queued, unit: 'requests' },
          target: { on: 'value', atMost: 0 },
        },
        {
          label: 'blackhole: fault on until',
          ours: { label: 'active until', value: blackhole.fault.activeUntilMs, unit: 'ms' },
          target: { on: 'value', atMost: 2499 },
        },
      ];
    } finally {
      await Promise.all([app.close(), slow.close()]);
    }
  },
};

const cancelRelease: BenchCheck = {
  name: 'scenario.cancel-release',
  measures:
    'time from cancelling a running scenario to everything released: ' +
    'a blackhole run in process (sockets, listeners, timers), a run ' +
    'with a mapped port in process (the port refusing) and over stdio ' +
    'in a child `faultline mcp`',
  peer: 'the moment of the cancel (the runs would otherwise go on for 10 s)',
  target: 'within 1 s each',
  tests: ['test/scenario-lifecycle.test.ts'],
  async run() {
    const rows: Row[] = [];
    const servers: TestServer[] = [];
    const app = await startApp();
    servers.push(app);
    const mcp = await connectInMemory();
    try {
      const resources = async (): Promise<string> => {
        const listeners =
          process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap').length - servers.length;
        return JSON.stringify({ ...(await heldResources(servers)), listeners });
      };
      await new Promise((resolve) => setTimeout(resolve, 200));
      const idle = await resources();
      const isIdle = async (): Promise<boolean> => (await resources()) === idle;
      // A blackhole run, in process.
      const controller = new AbortController();
      const call = mcp.client.callTool(
        {
          name: 'fault_run_blackhole_impact_scenario',
          arguments: { url: `${app.origin}/ok`, duration: '10s', num_clients: 4, rps: 5, timeout: 5 },
        },
        undefined,
        { signal: controller.signal },
      );
      const settled = call.then(
        () => 'answered',
        () => 'rejected',
      );
      await waitUntil(() => app.arrivals.length >= 4, 10_000, 'requests reaching the app');
      const cancelledAt = performance.now();
      controller.abort();
      if ((await settled) !== 'rejected') throw new Error('the cancelled call answered');
      await waitUntil(isIdle, 10_000, 'resources released');
      rows.push({
        label: 'in process: blackhole',
        ours: { label: 'released after', value: performance.now() - cancelledAt, unit: 'ms' },
        target: { on: 'value', atMost: 1000 },
      });
      // A mapped port, in process and over stdio.
      for (const where of ['in process', 'over stdio'] as const) {
        const upstream = await startApp();
        const proxyPort = await closedPort();
        const caller = await startAppCallingUpstream(proxyPort);
        servers.push(upstream, caller);
        const session = where === 'in process' ? mcp : await connectStdio();
        try {
          const aborting = new AbortController();
          const running = session.client
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
              { signal: aborting.signal },
            )
            .then(
              () => 'answered',
              () => 'rejected',
            );
          await waitUntil(() => upstream.arrivals.length >= 2, 10_000, 'upstream calls through the proxy');
          const at = performance.now();
          aborting.abort();
          if ((await running) !== 'rejected') throw new Error('the cancelled call answered');
          await waitUntil(() => refuses(proxyPort), 10_000, 'the mapped port refusing');
          rows.push({
            label: `${where}: mapped port`,
            ours: { label: 'refusing after', value: performance.now() - at, unit: 'ms' },
            target: { on: 'value', atMost: 1000 },
          });
        } finally {
          if (session !== mcp) await session.close();
        }
      }
    } finally {
      await mcp.close();
      await Promise.all(servers.map((server) => server.close()));
    }
    return rows;
  },
};

/**
 * Listening servers alive now, on this thread and on the proxy thread: the warm-up's sink listens
 * here, its proxy on the proxy thread (proxy-host/), as a scenario's does. Counting this thread
 * alone never saw the warm-up's two, and the checks waited 10 s for them in vain.
 */
async function listening(): Promise<number> {
  const here = process.getActiveResourcesInfo();
  return [...here, ...(await proxyThreadResources())].filter((kind) => kind === 'TCPServerWrap').length;
}

const warmUpShared: BenchCheck = {
  name: 'scenario.warm-up-shared',
  measures:
    'the once-per-process warm-up shared by two callers (fresh ' +
    'process): when the first returns after its signal aborts, from ' +
    'its start; a call once warm',
  peer: 'the whole warm-up, which goes on for the second caller',
  target: 'the cancelled caller back within 0.75 of the whole warm-up, a call once warm within 0.25 of it',
  tests: ['test/scenario-warm-up.test.ts'],
  async run() {
    const base = await listening();
    const first = new AbortController();
    const started = performance.now();
    let firstBack = Number.NaN;
    const firstCall = warmUpOnce(first.signal).then(() => (firstBack = performance.now() - started));
    const second = warmUpOnce();
    await waitUntil(async () => (await listening()) >= base + 2, 10_000, 'the warm-up listening');
    first.abort();
    await second;
    const whole = performance.now() - started;
    await firstCall;
    const again = performance.now();
    await warmUpOnce();
    const warm = performance.now() - again;
    const peer = { label: 'whole warm-up', value: whole, unit: 'ms' };
    return [
      {
        label: 'cancelled caller',
        ours: { label: 'returned after', value: firstBack, unit: 'ms' },
        peer,
        target: { on: 'ratio', atMost: 0.75 },
      },
      {
        label: 'once warm',
        ours: { label: 'took', value: warm, unit: 'ms' },
        peer,
        target: { on: 'ratio', atMost: 0.25 },
      },
    ];
  },
};

const warmUpCancel: BenchCheck = {
  name: 'scenario.warm-up-cancel',
  measures: 'a scenario cancelled once its warm-up is under way (fresh process): when it returns, from its start',
  peer: 'a whole warm-up in the same process right after (the cancelled one does not count as done)',
  target: 'within 0.75 of the whole warm-up',
  tests: ['test/scenario-cancel-warm-up.test.ts'],
  async run() {
    const app = await startApp();
    const base = await listening();
    try {
      const spec = await scenarioFromArguments(
        'latency',
        { url: `${app.origin}/ok`, duration: '1s', num_clients: 1, rps: 10, latency: 1 },
        makeConfig().scenario,
      );
      const controller = new AbortController();
      const started = performance.now();
      const run = runScenario(spec, { signal: controller.signal }).then(
        () => 'answered',
        () => 'rejected',
      );
      await waitUntil(async () => (await listening()) >= base + 2, 10_000, 'the warm-up listening');
      controller.abort();
      if ((await run) !== 'rejected') throw new Error('the cancelled scenario answered');
      const cancelled = performance.now() - started;
      const again = performance.now();
      await warmUpOnce();
      const whole = performance.now() - again;
      return [
        {
          label: 'scenario cancelled in warm-up',
          ours: { label: 'returned after', value: cancelled, unit: 'ms' },
          peer: { label: 'whole warm-up', value: whole, unit: 'ms' },
          target: { on: 'ratio', atMost: 0.75 },
        },
      ];
    } finally {
      await app.close();
    }
  },
};

const refusalTime: BenchCheck = {
  name: 'scenario.refusal-time',
  measures:
    'how long a scenario tool takes to refuse bad arguments through ' +
    'MCP (a bad url, rps 0, a duration over the limit, a bad SLO, a ' +
    'public url), the worst of them',
  peer: 'a run, which would take its duration plus the warm-up',
  target: 'under 500 ms: refused up front, not after any work',
  tests: ['test/scenario-input.test.ts'],
  async run() {
    const mcp = await connectInMemory(makeConfig({ scenario: { maxDurationMs: 60_000, maxRatePerSecond: 1000 } }));
    const app = await startApp();
    let worst = 0;
    try {
      const url = `${app.origin}/ok`;
      for (const args of [
        { url: 'ftp://127.0.0.1/file' },
        { url, rps: 0 },
        { url, duration: '2m' },
        { url, slos: ['fast please'] },
        { url: 'http://8.8.8.8/' },
      ]) {
        const started = performance.now();
        const result = (await mcp.client.callTool({
          name: 'fault_run_latency_impact_scenario',
          arguments: args,
        })) as CallToolResult;
        if (!result.isError) throw new Error(`not refused: ${JSON.stringify(args)}`);
        worst = Math.max(worst, performance.now() - started);
      }
    } finally {
      await mcp.close();
      await app.close();
    }
    return [
      {
        label: 'worst of 5 refusals',
        ours: { label: 'took', value: worst, unit: 'ms' },
        target: { on: 'value', atMost: 499 },
      },
    ];
  },
};

const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));

/** The p99 of a fresh `faultline run latency --latency 0` at 4,000 req/s (20 × 200) against `url`, per phase. */
async function cliRunP99(url: string, extra: string[], log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-proxy-tail-'));
  const json = join(dir, 'run.json');
  try {
    const args = ['run', 'latency', '--latency', '0', '--url', url, '--rps', '200', '--num-clients', '20'];
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [CLI, ...args, '--duration', '4s', '--json', json, ...extra], (error, _out, stderr) =>
        // 3 and 4 are verdicts (an SLO failed, the fault never acted): the record is what counts.
        error && error.code !== 3 && error.code !== 4 ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(),
      ),
    );
    type Load = { latency: { p99: number }; timeline: Array<{ p95Ms: number | null }>; warmRequests?: number };
    const record = JSON.parse(readFileSync(json, 'utf8')) as Record<string, { load: Load }>;
    const phases = ['baseline', 'run'].filter((phase) => record[phase]?.load);
    const p99 = Object.fromEntries(phases.map((phase) => [phase, record[phase]!.load.latency.p99]));
    // Where the tail is: a cold path shows in second 0's p95 alone.
    const seconds = phases.map((phase) => {
      const load = record[phase]!.load;
      const p95s = load.timeline.map((second) => second.p95Ms?.toFixed(2) ?? '-').join('/');
      const warm = load.warmRequests ?? 0;
      return `${phase} p99 ${load.latency.p99.toFixed(2)} ms, p95 per second ${p95s} ms, ${warm} warm`;
    });
    log(`${extra[0] === '--baseline' ? 'through the proxy' : 'direct'}: ${seconds.join('; ')}`);
    return p99;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const proxyTail: BenchCheck = {
  name: 'scenario.proxy-tail',
  measures:
    'the p99 of `faultline run latency --latency 0 --baseline --rps ' +
    '200 --num-clients 20 --duration 4s` (4,000 req/s, fresh process) ' +
    'against a small local HTTP server, for the baseline phase ' +
    '(proxy, no fault) and the fault phase (latency 0): the pair with ' +
    'the median difference of 3 interleaved pairs',
  peer:
    'the same command with the load straight to the server (a --proxy ' +
    'mapping, so nothing in front of --url), fresh process, each run ' +
    'interleaved with one of ours',
  target: 'with the proxy in the path, p99 within +5 ms of direct, for the fault set to zero and for no fault',
  tests: ['test/load-open-loop.test.ts', 'test/scenario-lifecycle.test.ts'],
  timeoutMs: 300_000,
  async run({ log }) {
    const upstream = await serve('upstream');
    try {
      const url = `http://127.0.0.1:${upstream.port}/`;
      // Straight to --url: the mapping only gives the scenario something else to stand in front of.
      const direct = ['--proxy', `0=127.0.0.1:${upstream.port}`];
      // One pair per round, ours and direct back to back (which goes first alternates, so a pair's order does not
      // favour one side): each pair's difference is taken at one moment of the machine, and the median pair judged.
      const pairs: Array<{ baseline: number; run: number; direct: number }> = [];
      for (let round = 0; round < 3; round++) {
        const pair = { baseline: Number.NaN, run: Number.NaN, direct: Number.NaN };
        const sides = [
          async () => {
            const p99 = await cliRunP99(url, ['--baseline'], log);
            pair.baseline = p99.baseline!;
            pair.run = p99.run!;
          },
          async () => void (pair.direct = (await cliRunP99(url, direct, log)).run!),
        ];
        for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
        pairs.push(pair);
      }
      const row = (label: string, phase: 'baseline' | 'run'): Row => {
        const differences = pairs.map((pair) => pair[phase] - pair.direct);
        log(`${label}: differences per pair ${differences.map((d) => d.toFixed(2)).join(', ')} ms`);
        const middle = pairs[differences.indexOf(median(differences))]!;
        return {
          label,
          ours: { label: 'through the proxy p99', value: middle[phase], unit: 'ms' },
          peer: { label: 'direct p99, same pair', value: middle.direct, unit: 'ms' },
          target: { on: 'difference', atMost: 5 },
        };
      };
      return [row('latency fault set to 0', 'run'), row('no fault (baseline phase)', 'baseline')];
    } finally {
      await upstream.stop();
    }
  },
};

export const checks: BenchCheck[] = [
  faultEffects,
  slowDependency,
  cancelRelease,
  warmUpShared,
  warmUpCancel,
  refusalTime,
  proxyTail,
];
