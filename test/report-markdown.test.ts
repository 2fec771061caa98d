/**
 * The markdown report: a golden file for a fixed result (fault's sections and exact headers, then
 * our additions), the mean that is the mean, and the pieces fault's users recognise (timeline
 * cell, fault descriptions, humanized total time) plus the chart.
 *
 * Regenerate the golden file with UPDATE_GOLDEN=1 and review its diff.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { computeStats, type CapacityResult } from '../src/load/index.js';
import { validateFault, type HttpFaultCounters } from '../src/proxy/index.js';
import { latencyChart } from '../src/report/chart.js';
import { describeFault, scopeGlyphs, timelineCell } from '../src/report/fault-text.js';
import { humanize, renderReport } from '../src/report/markdown.js';
import { fixturePath } from './helpers/repo.js';
import { runCliProcess } from './helpers/processes.js';
import { FAULT_LATENCIES, fixedResult } from './fixtures/scenario/fixed-result.js';
import {
  assertReportMatchesJson,
  OVERVIEW_HEADER,
  PERCENTILE_HEADER,
  SLO_HEADER,
  tableRows,
} from './fixtures/scenario/report-tables.js';

const GOLDEN = fixturePath('scenario', 'report.golden.md');

describe('renderReport', () => {
  test('matches the golden report', () => {
    const report = renderReport(fixedResult());
    if (process.env.UPDATE_GOLDEN) writeFileSync(GOLDEN, report);
    assert.equal(report, readFileSync(GOLDEN, 'utf8'));
  });

  test("fault's headers, exactly as fault's own report writes them, in fault's order", () => {
    const lines = renderReport(fixedResult()).split('\n');
    const order = [
      '# Scenarios Report',
      'Start: 2026-01-02 03:04:05.006 UTC',
      'End: 2026-01-02 03:04:11.050 UTC',
      '## Scenario: Evaluating runtime performance of http://127.0.0.1:8080/api  (items: 1)',
      '### 🎯 `POST` http://127.0.0.1:8080/api | Failed',
      '**Call**:',
      '- Method: `POST`',
      '- Timeout: 1000ms',
      '- Headers:',
      '    - Authorization: xxxxxx',
      '- Body?: Yes',
      '**Strategy**:',
      'load for 2s with 2 clients @ 5 RPS',
      '**Faults Applied**:',
      '| Type | Timeline | Description |',
      '| latency | 0% `.xx.......` 100% | Latency: ➡️🖧, Per Read/Write ' +
        'Op.: false, Distribution: normal, Mean: 100.00 ms, Stddev: 5.00 ' +
        'ms |',
      '**Run Overview**:',
      OVERVIEW_HEADER,
      PERCENTILE_HEADER,
      SLO_HEADER,
      '---',
    ];
    let from = 0;
    for (const expected of order) {
      const at = lines.indexOf(expected, from);
      assert.notEqual(at, -1, `missing, or out of order: ${expected}`);
      from = at + 1;
    }
  });

  test("the report's tables show the result's numbers", () => {
    const result = fixedResult();
    assertReportMatchesJson(renderReport(result), result);
  });

  test('connections reopened after the target or a fault closed them are said, only when there were some', () => {
    const result = fixedResult();
    assert.match(renderReport(result), /Connections: 4 opened \(up to max_connections = \d+\), at most/);
    result.run.load!.connectionsReopened = 36;
    assert.match(
      renderReport(result),
      /Connections: 4 opened \(up to max_connections = \d+\), reopened 36 times \(after the target or a fault closed one, or a request timed out on it\), at most/,
    );
  });

  test('requests that waited for a connection are said with why; warm requests with the figures that hold them', () => {
    const result = fixedResult();
    const load = result.run.load!;
    load.maxConnections = 1000;
    load.connectionsOpened = 114;
    load.queued = 51;
    assert.match(
      renderReport(result),
      /51 requests waited for a free connection \(every open one busy while more were being set up, at most 4 at a time; not the max_connections cap\)/,
    );
    load.saturation = { waitedPercent: 1, waitP50Ms: 3, connectionsNeeded: 1200 };
    assert.match(
      renderReport(result),
      /51 requests waited for a free connection \(every open one busy, some at the max_connections cap\)/,
    );
    load.warmRequests = 20;
    // The proxy carried them: its byte and connection counters hold them, the load's figures do not.
    assert.match(
      renderReport(result),
      /20 unmeasured requests .* in none of the load's figures, but the proxy's connection and byte counters include them\./,
    );
    // The process's own warm-up, with the rate and length it ran at (scenario/warm-up.ts).
    assert.doesNotMatch(renderReport(result), /warmed its own load generator/);
    load.processWarmUp = { ratePerSecond: 200, durationMs: 1000, requests: 200, connectionRequests: 32 };
    assert.match(
      renderReport(result),
      /warmed its own load generator and proxy: 200 req\/s for 1s \(200 requests, and 32 more as its connections opened\)/,
    );
  });

  test('target connect failures: the load sees resets in front of the url, the app does through proxies', () => {
    const result = fixedResult();
    result.run.targetConnectFailures = { ECONNREFUSED: 3 };
    assert.match(
      renderReport(result),
      /could not reach the target 3 times \(ECONNREFUSED × 3\); the load sees each as a reset/,
    );
    result.routedThroughProxy = false;
    assert.match(
      renderReport(result),
      /could not reach the target 3 times \(ECONNREFUSED × 3\); the app's call through the mapped port sees each as a reset/,
    );
  });

  test('"Mean Latency (ms)" is the arithmetic mean, not the median, on a skewed sample', () => {
    const result = fixedResult();
    const [row] = tableRows(renderReport(result), OVERVIEW_HEADER);
    const mean = FAULT_LATENCIES.reduce((sum, ms) => sum + ms, 0) / FAULT_LATENCIES.length;
    assert.equal(row![4], mean.toFixed(2));
    assert.equal(row![4], '193.82');
    assert.notEqual(row![4], result.run.load!.latency!.p50.toFixed(2));
    // Errors include the timeouts.
    assert.equal(row![1], '2 (10.0%)');
    assert.equal(row![6], '2 seconds and 950 ms');
  });

  test('the status line and the first lines show the verdict and why', () => {
    const failing = fixedResult();
    const failed = renderReport(failing);
    assert.match(failed, /\| Failed$/m);
    assert.match(failed.split('\n')[2]!, /^\*\*Verdict: Failed\*\* — SLO "99% @ 350ms" failed\.$/);
    const passing = fixedResult();
    passing.verdict = 'passed';
    passing.verdictReasons = [];
    passing.passed = true;
    assert.match(renderReport(passing), /\| Passed$/m);
    const inconclusive = fixedResult();
    inconclusive.verdict = 'inconclusive';
    inconclusive.verdictReasons = [
      'the app made no connection to 127.0.0.1:34000 ' +
        '(34000=127.0.0.1:9) during the run: point its upstream at that ' +
        'address.',
    ];
    inconclusive.passed = false;
    const text = renderReport(inconclusive);
    assert.match(text, /\| Inconclusive$/m);
    assert.match(
      text.split('\n')[2]!,
      /^\*\*Verdict: Inconclusive\*\* — the app made no connection to 127\.0\.0\.1:34000/,
    );
  });

  test('without a baseline or a fault window, those sections are left out', () => {
    const result = fixedResult();
    result.baseline = null;
    result.impact = [];
    result.run.load!.duringFault = null;
    const report = renderReport(result);
    assert.doesNotMatch(report, /Impact against the baseline/);
    assert.doesNotMatch(report, /While the fault was active/);
  });

  test('a capacity run renders its own overview', () => {
    const result = fixedResult();
    const capacity = {
      requestsPerSecond: 812.5,
      sent: 1625,
      errors: 5,
      timeouts: 2,
      elapsedMs: 2_004,
      latencyWholeMs: { mean: 2.46, p50: 2, p99: 9 },
    } as unknown as CapacityResult;
    result.strategy.type = 'capacity';
    result.run = { ...result.run, load: null, capacity, slos: [], passed: true };
    result.baseline = null;
    result.passed = true;
    const report = renderReport(result);
    assert.match(report, /^capacity for 2s with 2 clients \(closed loop/m);
    assert.match(report, /^\| 812\.5 \| 1625 \| 5 \(0\.3%\) \| 2 \| 2\.46 \| 2 \| 9 \| 2 seconds and 4 ms \|$/m);
    assert.doesNotMatch(report, new RegExp(SLO_HEADER.replace(/[|.()?%]/g, '\\$&')));
  });
});

const NETWORK_FAULTS_HEADER =
  '| Fault | Connections | Applications | Delays drawn, summed (ms) ' +
  '| Segments lost / seen | Stall (ms) | Held (ms) | Bytes paced |';
const HTTP_FAULTS_HEADER =
  '| HTTP fault | Type | Mapping | Requests met | Changed (applications) | Drawn, changed nothing ' +
  '| Passes (not drawn) | Oversized (passed unchanged) |';

/** The HTTP fault table's rows as the counters say they must read. */
function httpRows(counters: readonly HttpFaultCounters[]): string[][] {
  return counters.map((f) => [
    f.name,
    f.type,
    f.target === null ? 'every mapping' : `\`${f.target}\``,
    String(f.requests),
    String(f.applications),
    String(f.unchanged),
    String(f.passes),
    String(f.oversized),
  ]);
}

const HTTP_ERROR: HttpFaultCounters = {
  name: 'error',
  type: 'error',
  target: null,
  active: false,
  requests: 12,
  applications: 4,
  passes: 8,
  oversized: 0,
  unchanged: 0,
};

describe("fault counters: every fault that ran, network and HTTP, with the JSON's figures", () => {
  test('network faults only: their table, no HTTP table', () => {
    const result = fixedResult();
    const report = renderReport(result);
    const [latency] = result.run.proxy.faults;
    assert.deepEqual(tableRows(report, NETWORK_FAULTS_HEADER), [
      ['latency', '2', String(latency!.applications), latency!.delayAddedMs.toFixed(1), '0 / 0', '0.0', '0.0', '0'],
    ]);
    assert.doesNotMatch(report, /\| HTTP fault \|/);
  });

  test('a network fault on a Redis or HTTP mapping names the requests it met, in their unit', () => {
    const result = fixedResult();
    const [latency] = result.run.proxy.faults;
    result.run.proxy.faults = [
      { ...latency!, name: 'silent', type: 'blackhole', respCommands: 291, timeHeldMs: 2000 },
      { ...latency!, name: 'slow', httpExchanges: 1 },
      latency!,
    ];
    const rows = tableRows(renderReport(result), `${NETWORK_FAULTS_HEADER} Requests met |`);
    assert.deepEqual(
      rows.map((row) => [row[0], row.at(-1)]),
      [
        ['silent', '291 Redis commands'],
        ['slow', '1 HTTP request'],
        ['latency', '0'],
      ],
    );
  });

  test('HTTP faults only (an http-error run): their table with requests, applications, passes', () => {
    const result = fixedResult();
    result.run.proxy.faults = [];
    result.run.proxy.httpFaults = [HTTP_ERROR];
    const report = renderReport(result);
    assert.deepEqual(tableRows(report, HTTP_FAULTS_HEADER), [
      ['error', 'error', 'every mapping', '12', '4', '0', '8', '0'],
    ]);
    assert.doesNotMatch(report, /\| Fault \| Connections \|/);
  });

  test('both kinds on one proxy, each fault limited to a mapping named: both tables, every fault', () => {
    const result = fixedResult();
    const limited: HttpFaultCounters = {
      name: 'slow-db',
      type: 'latency',
      target: '34000',
      active: true,
      requests: 5,
      applications: 5,
      passes: 0,
      oversized: 0,
      unchanged: 0,
    };
    result.run.proxy.httpFaults = [HTTP_ERROR, limited];
    const report = renderReport(result);
    assert.equal(tableRows(report, NETWORK_FAULTS_HEADER).length, result.run.proxy.faults.length);
    assert.deepEqual(tableRows(report, HTTP_FAULTS_HEADER), httpRows(result.run.proxy.httpFaults));
  });

  test('no fault on the proxy is said, not left as an empty section', () => {
    const result = fixedResult();
    result.run.proxy.faults = [];
    assert.match(renderReport(result), /### Fault proxy counters[\s\S]*No fault was set on this proxy\./);
  });

  test("with a baseline, its own proxy's traffic is named next to the impact", () => {
    const result = fixedResult();
    const mapping = result.baseline!.proxy.mappings[0]!;
    assert.match(
      renderReport(result),
      new RegExp(
        `its proxy: \`${mapping.mapping.replace(/[.]/g, '\\.')}\` ${mapping.connections} ` +
          `connections, ${mapping.bytesUpstream} B client→target, ${mapping.bytesDownstream} ` +
          `B target→client`,
      ),
    );
  });

  test(
    "faultline run http-error: the markdown shows the HTTP fault's " + 'counters, equal to its --json record',
    async () => {
      const server = createServer((_request, response) => response.end('{"ok":true}'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const work = mkdtempSync(join(tmpdir(), 'faultline-report-'));
      try {
        const port = (server.address() as AddressInfo).port;
        const record = join(work, 'run.json');
        const run = await runCliProcess(
          [
            'run',
            'http-error',
            '--url',
            `http://127.0.0.1:${port}/`,
            '--duration',
            '1s',
            '--num-clients',
            '2',
            '--rps',
            '6',
            '--probability',
            '0.5',
            '--seed',
            '7',
            '--json',
            record,
          ],
          {},
        );
        assert.ok(run.code === 0 || run.code === 3, run.stderr);
        const json = JSON.parse(readFileSync(record, 'utf8')) as {
          run: { proxy: { httpFaults: HttpFaultCounters[] } };
        };
        const counters = json.run.proxy.httpFaults;
        assert.equal(counters.length, 1);
        assert.ok(counters[0]!.requests > 0 && counters[0]!.applications > 0, JSON.stringify(counters));
        assert.equal(
          counters[0]!.requests,
          counters[0]!.applications + counters[0]!.passes + counters[0]!.oversized + counters[0]!.unchanged,
        );
        assert.deepEqual(tableRows(run.stdout, HTTP_FAULTS_HEADER), httpRows(counters));
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        rmSync(work, { recursive: true, force: true });
      }
    },
  );
});

describe('report pieces', () => {
  test('timeline cell: ten slots, x where the fault is active', () => {
    assert.equal(timelineCell(0, 1), '0% `xxxxxxxxxx` 100%');
    assert.equal(timelineCell(0.1, 0.3), '0% `.xx.......` 100%');
    assert.equal(timelineCell(0.5, 1), '0% `.....xxxxx` 100%');
    assert.equal(timelineCell(0, 0.05), '0% `x.........` 100%');
    assert.equal(timelineCell(0.95, 1), '0% `..........` 100%');
  });

  test('fault descriptions and scope glyphs', () => {
    assert.equal(scopeGlyphs('server', 'ingress'), '➡️🖧');
    assert.equal(scopeGlyphs('server', 'egress'), '⬅️🖧');
    assert.equal(scopeGlyphs('server', 'both'), '↔️🖧');
    assert.equal(scopeGlyphs('client', 'ingress'), '🖥️⬅️');
    assert.equal(scopeGlyphs('client', 'egress'), '🖥️➡️');
    assert.equal(scopeGlyphs('client', 'both'), '🖥️↔️');
    const described = (spec: unknown) => describeFault(validateFault(spec));
    assert.equal(
      described({ type: 'jitter', amplitudeMs: 100, frequencyHz: 3 }),
      'Jitter: ➡️🖧Amplitude: 100.00ms, Frequence 3.00Hz',
    );
    assert.equal(
      described({ type: 'bandwidth', bytesPerSecond: 300, side: 'client', direction: 'egress' }),
      'Bandwidth: 🖥️➡️Rate: 300Bps',
    );
    assert.equal(described({ type: 'blackhole', direction: 'both' }), 'Blackhole: ↔️🖧');
    assert.equal(described({ type: 'packet_loss' }), 'Packet Loss: ➡️🖧Rate: 5.00%, Model: bernoulli');
  });

  test('total time humanized as fault prints it', () => {
    assert.equal(humanize(10_179), '10 seconds and 179 ms');
    assert.equal(humanize(1_000), '1 second');
    assert.equal(humanize(0.4), '0 ms');
    assert.equal(humanize(61_005), '1 minute, 1 second and 5 ms');
    assert.equal(humanize(120_000), '2 minutes');
  });

  test('chart: a mermaid xychart of p50 and p95 per second, fault seconds starred, empty seconds left out', () => {
    const second = (n: number, p50: number | null, faultActive = false) => ({
      second: n,
      requests: p50 === null ? 0 : 10,
      errors: 0,
      p50Ms: p50,
      p95Ms: p50 === null ? null : p50 * 2,
      faultActive,
    });
    assert.equal(latencyChart([second(0, 5)]), null);
    const chart = latencyChart([second(0, 5), second(1, null), second(2, 50.123, true)])!;
    assert.match(chart, /^```mermaid\nxychart-beta\n/);
    assert.match(chart, /x-axis "second of the run" \["0", "2\*"\]/);
    assert.match(chart, /line \[5, 50\.12\]/);
    assert.match(chart, /line \[10, 100\.25\]/);
    assert.match(chart, /y-axis "latency \(ms\)" 0 --> 111/);
    assert.ok(chart.endsWith('```'));
  });

  test('computeStats mean is the mean (the figure the report prints)', () => {
    const stats = computeStats([1, 1, 1, 1, 96])!;
    assert.equal(stats.mean, 20);
    assert.equal(stats.p50, 1);
  });
});
