/**
 * PromQL checks in experiments, against a real Prometheus scraping the example app (its
 * prom-client metrics) every second: the fault that makes the app answer 502 fails the error-ratio
 * expectation inside the fault's window; the same run without the fault passes; a run without
 * load is judged by PromQL alone; a query with no series and a Prometheus stopped mid-run are
 * inconclusive, never passed; bad input is refused before anything runs, naming the entry.
 * Times enter only as wide inequalities.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeConfig } from '../src/config.js';
import { InputError } from '../src/kernel/errors.js';
import {
  parseExperimentText,
  readExperiment,
  runExperiment,
  renderHtml,
  renderJunit,
  renderMarkdown,
  type ExperimentResult,
} from '../src/experiment/index.js';
import type { SafetyPolicy } from '../src/experiment/adapters/policy.js';
import { ProgramPolicy } from '../src/consent/index.js';
import { exportExperiment } from '../src/experiment/export/index.js';
import { startExampleStack, freePort, type ExampleStack } from './fixtures/experiment/stack.js';
import { ExperimentMetrics, startMetricsServer, type MetricsServer } from '../src/metrics/index.js';
import { PrometheusClient } from '../src/prometheus/index.js';
import { repoRoot } from './helpers/repo.js';
import { prometheusMissing, startPrometheus, waitForSeries, type RunningPrometheus } from './helpers/prometheus.js';

const skip = prometheusMissing();
const work = mkdtempSync(join(tmpdir(), 'faultline-promql-'));
after(() => rmSync(work, { recursive: true, force: true }));

const limits = makeConfig().scenario;
const policy: SafetyPolicy = {
  allowRemoteTargets: false,
  allowNonLoopbackBind: false,
  allowProduction: false,
};

const ERROR_RATIO = 'sum(rate(app_http_requests_total{code="502"}[3s])) / sum(rate(app_http_requests_total[3s]))';
/**
 * For a check that must hold on every poll, where no moment is asserted: a rate needs two scrapes in
 * its window, and a loaded machine misses scrapes (1 s apart, 900 ms timeout), so a 3 s window has
 * answered "no series" (inconclusive) at a load of 12; 5 s tolerates three missed in a row. Polled
 * from 5 s into the run, it still sees nothing of the run before (the fault test's errors).
 */
const ERROR_RATIO_WIDE = ERROR_RATIO.replaceAll('[3s]', '[5s]');
/** The app answered a scrape within the last 10 s: a missed scrape (up 0) is not the app down. */
const APP_UP = 'max_over_time(up{job="app"}[10s])';

function byId(result: ExperimentResult, id: string) {
  const found = result.expectations.find((e) => e.id === id);
  assert.ok(found, `${id} in ${result.expectations.map((e) => e.id).join(', ')}`);
  return found;
}

describe('PromQL checks against a real Prometheus', { skip }, () => {
  let stack: ExampleStack;
  let prometheus: RunningPrometheus;
  // faultline's own /metrics for the runs, scraped by the same Prometheus with its bearer token.
  const metrics = new ExperimentMetrics();
  let metricsServer: MetricsServer;

  before(async () => {
    stack = await startExampleStack({ fallback: false });
    metricsServer = await startMetricsServer({
      host: '127.0.0.1',
      port: await freePort(),
      token: 'scrape-token',
      registry: metrics.registry,
      bind: { argument: '--metrics', what: 'the metrics endpoint', allowNonLoopbackBind: false },
    });
    prometheus = await startPrometheus(join(work, 'prometheus'), [
      { job: 'app', address: `127.0.0.1:${stack.appPort}` },
      { job: 'faultline', address: new URL(metricsServer.url).host, bearerToken: 'scrape-token' },
    ]);
    // Three scrapes of the app: a rate over 3 s has points from the start of the runs.
    await waitForSeries(prometheus.url, 'count_over_time(app_http_requests_total{code="200"}[10s]) >= 3');
  });
  after(async () => {
    await prometheus?.stop();
    await metricsServer?.close();
    await stack?.stop();
  });

  const base = () => ({
    title: 'weather errors reach the users',
    load: { url: `http://127.0.0.1:${stack.appPort}/weather`, rps: 20, duration: '11s', timeout: '5s' },
    proxies: [`${stack.proxyPort}=127.0.0.1:${stack.weatherPort}#weather`],
  });

  test('the fault raises the error ratio: the expectation fails inside the fault window, with the figure', async () => {
    const file = {
      ...base(),
      prometheus: { url: prometheus.url },
      method: [
        { name: 'weather down', at: '4s', for: '5s', fault: { target: 'weather', type: 'error', statusCode: 503 } },
      ],
      expect: [{ prometheus: ERROR_RATIO, below: 0.05, name: 'error ratio below 5%' }],
    };
    const experiment = await readExperiment(file, { limits, policy });
    const startedAt = new Date();
    const result = await runExperiment(experiment, { programs: ProgramPolicy.owner(), policy, metrics });
    const verdict = byId(result, 'expect[0]');
    assert.equal(verdict.status, 'failed', renderMarkdown(result));
    assert.equal(verdict.kind, 'promql');
    assert.ok(verdict.atMs! >= 4000 && verdict.atMs! < 9500, `broke at ${verdict.atMs} ms, the fault was on 4s–9s`);
    assert.match(verdict.reason, /broke at .*: [\d.]+.*not < 0\.05/);
    assert.equal(result.verdict, 'failed');
    assert.ok((result.promql?.['expect[0]']?.length ?? 0) >= 3, 'the polls are in the result');
    assert.match(renderJunit(result), /type="promql"/);
    assert.match(renderMarkdown(result), /error ratio below 5%/);

    // The fault's window on the dashboard: docs/prometheus.md's annotation query, over the run.
    const client = new PrometheusClient({ url: prometheus.url });
    await waitForSeries(prometheus.url, 'faultline_experiment_expectation_state{state="failed"} == 1');
    const endedAt = new Date();
    const range = await client.queryRange(
      'max by (step, fault) (faultline_experiment_step_active) == 1',
      startedAt,
      endedAt,
      1000,
    );
    assert.ok(range.ok, JSON.stringify(range));
    const onFor = range.samples.length;
    assert.ok(onFor >= 3 && onFor <= 8, `the step shows on for ${onFor} s of a 5 s fault`);
    assert.deepEqual(range.samples[0]!.labels, { step: 'weather down', fault: 'error' });
    // docs/prometheus.md's "errors during a fault": the app's 5xx ratio, only while the fault is on.
    const during = await client.queryRange(
      `(${ERROR_RATIO.replaceAll('[3s]', '[30s]')}) and on() ` +
        `(max(faultline_experiment_step_active) == 1 or ` +
        `max(faultline_fault_active) == 1)`,
      startedAt,
      endedAt,
      1000,
    );
    assert.ok(during.ok, JSON.stringify(during));
    assert.ok(
      during.samples.length >= 3 && during.samples.length <= 9,
      `${during.samples.length} s of errors during the fault`,
    );
    assert.ok(during.samples.some((sample) => sample.value > 0));
    const served = await client.query('sum(faultline_experiment_load_requests_total)');
    assert.ok(served.ok && served.samples[0]!.value > 100, JSON.stringify(served));
    const histogram = await client.query(
      'histogram_quantile(0.5, sum by (le) (faultline_experiment_request_duration_seconds_bucket))',
    );
    assert.ok(histogram.ok && histogram.samples[0]!.value > 0, JSON.stringify(histogram));
    const proxyFault = await client.query('sum(faultline_fault_applications_total{proxy="experiment",type="error"})');
    assert.ok(proxyFault.ok && proxyFault.samples[0]!.value > 0, JSON.stringify(proxyFault));
  });

  test('the same without the fault passes', async () => {
    const file = {
      ...base(),
      expect: [
        { prometheus: ERROR_RATIO_WIDE, below: 0.05, during: '5s..10s' },
        { prometheus: `sum(${APP_UP})`, comparator: { criteria: '==', value: '1' }, during: 'run' },
      ],
    };
    const experiment = await readExperiment(file, {
      limits,
      policy,
      env: { FAULTLINE_PROMETHEUS_URL: prometheus.url },
    });
    const result = await runExperiment(experiment, { programs: ProgramPolicy.owner(), policy });
    const verdict = byId(result, 'expect[0]');
    assert.equal(verdict.status, 'passed', renderMarkdown(result));
    assert.match(verdict.figure, /^(\d+) of \1 polls held/);
    assert.equal(result.verdict, 'passed', renderMarkdown(result));
  });

  test('no load: judged by PromQL alone; a query with no series is inconclusive, not passed', async () => {
    const file = {
      title: 'real traffic only',
      duration: '3s',
      expect: [
        { prometheus: APP_UP, url: prometheus.url, between: [1, 1], during: 'run' },
        { prometheus: 'no_such_metric_total', url: prometheus.url, below: 1, during: 'run' },
      ],
    };
    const result = await runExperiment(await readExperiment(file, { limits, policy }), {
      programs: ProgramPolicy.owner(),
      policy,
    });
    assert.equal(byId(result, 'expect[0]').status, 'passed', renderMarkdown(result));
    const empty = byId(result, 'expect[1]');
    assert.equal(empty.status, 'inconclusive');
    assert.match(empty.reason, /no series/);
    assert.equal(result.verdict, 'inconclusive');
  });

  test('a PromQL abort rule stops the injection when its condition is met', async () => {
    // A fault far longer than the rule needs, and polls that may answer late: at a load of 14 the app's
    // scrapes were missed, Prometheus answered no poll within the default 2 s and the clearing came 3 s late,
    // so a 6 s fault ended unaborted. The abort ends the run, so a quick machine does not wait the 15 s out.
    const file = {
      ...base(),
      load: { ...base().load, duration: '20s' },
      prometheus: { url: prometheus.url },
      method: [
        { name: 'weather down', at: '3s', for: '15s', fault: { target: 'weather', type: 'error', statusCode: 503 } },
      ],
      expect: ['p99 < 5s'],
      abort_when: [{ prometheus: ERROR_RATIO_WIDE, above: 0.5, for: '2s', timeout: '20s' }],
    };
    const result = await runExperiment(await readExperiment(file, { limits, policy }), {
      programs: ProgramPolicy.owner(),
      policy,
    });
    assert.ok(result.aborted, renderMarkdown(result));
    assert.ok(result.aborted.atMs > 3000 && result.aborted.atMs < 18_000, `aborted at ${result.aborted.atMs}`);
    assert.match(result.aborted.figure, /on 2 polls in a row/);
    assert.equal(result.verdict, 'failed');
  });

  test('exports refuse a PromQL check with the engine’s reason', async () => {
    const experiment = await readExperiment(
      {
        ...base(),
        prometheus: { url: prometheus.url },
        method: [{ at: '4s', for: '5s', fault: { target: 'weather', type: 'latency', latencyMs: 100 } }],
        expect: [{ prometheus: ERROR_RATIO, below: 0.05 }],
      },
      { limits, policy },
    );
    for (const [engine, reason] of [
      ['k6', /cannot query Prometheus/],
      ['chaos-mesh', /StatusCheck only checks an HTTP endpoint's status code/],
      ['fis', /CloudWatch alarm, not on a PromQL query/],
    ] as const) {
      await assert.rejects(
        exportExperiment(experiment, engine, { partial: false }),
        (error: Error) => /expect\[0\]/.test(error.message) && reason.test(error.message),
        engine,
      );
    }
  });

  test('Prometheus stopped mid-run: inconclusive, not passed', async () => {
    const file = {
      ...base(),
      expect: [{ prometheus: ERROR_RATIO, below: 0.05, url: prometheus.url, during: '2s..10s' }],
    };
    const experiment = await readExperiment(file, { limits, policy });
    let stopping: Promise<void> | undefined;
    const result = await runExperiment(experiment, {
      programs: ProgramPolicy.owner(),
      policy,
      onProgress: ({ doneMs }) => {
        if (doneMs >= 4000) stopping ??= prometheus.stop();
      },
    });
    await stopping;
    assert.ok(stopping, 'prometheus was stopped during the run');
    const verdict = byId(result, 'expect[0]');
    assert.equal(verdict.status, 'inconclusive', renderMarkdown(result));
    assert.match(verdict.reason, /could not be judged .*unreachable/);
    assert.match(renderHtml(result), /not judged: unreachable/, "the HTML report's timeline marks the polls");
    assert.equal(result.verdict, 'inconclusive');
  });
});

describe('PromQL checks: bad input is refused before anything runs', { skip }, () => {
  let prometheus: RunningPrometheus;
  before(async () => {
    prometheus = await startPrometheus(join(work, 'prometheus-input'), []);
  });
  after(() => prometheus?.stop());

  const file = (entry: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    title: 'input',
    duration: '2s',
    expect: [{ during: 'run', ...entry }],
    ...extra,
  });
  const refused = async (raw: unknown, pattern: RegExp, env: NodeJS.ProcessEnv = {}) =>
    assert.rejects(
      readExperiment(raw, { limits, policy, env }),
      (error: Error) => error instanceof InputError && pattern.test(error.message),
    );

  test('a malformed query, as Prometheus says, naming the entry', async () => {
    await refused(
      file({ prometheus: 'sum(rate(http_requests_total[5m]', url: prometheus.url, below: 1 }),
      /^expect\[0\]\.prometheus: Prometheus refused the query: .*parse error/,
    );
  });

  test('a URL outside the target policy, before any request', async () => {
    await refused(file({ prometheus: 'up', url: 'http://10.1.2.3:9090', below: 1 }), /^expect\[0\]\.url: .*loopback/);
    await refused(
      file({ prometheus: 'up', below: 1 }, { prometheus: { url: 'http://169.254.169.254/' } }),
      /^prometheus\.url: .*metadata/,
    );
    await refused(file({ prometheus: 'up', below: 1 }), /^FAULTLINE_PROMETHEUS_URL: .*private address/, {
      FAULTLINE_PROMETHEUS_URL: 'http://192.168.1.10:9090',
    });
    await refused(file({ prometheus: 'up', url: 'ftp://127.0.0.1/', below: 1 }), /^expect\[0\]\.url: .*only http/);
  });

  test('conditions, durations and the missing URL', async () => {
    const url = prometheus.url;
    await refused(file({ prometheus: 'up', below: 1 }), /^expect\[0\]: no Prometheus to ask/);
    await refused(file({ prometheus: 'up', url }), /^expect\[0\]: say what the value must be/);
    await refused(file({ prometheus: 'up', url, between: [2, 1] }), /^expect\[0\]\.between: 2 is above 1/);
    await refused(file({ prometheus: 'up', url, between: [1] }), /^expect\[0\]\.between/);
    await refused(file({ prometheus: 'up', url, comparator: { criteria: '=~', value: '1' } }), /comparator\.criteria/);
    await refused(
      file({ prometheus: 'up', url, comparator: { criteria: '>=', value: 'high' } }),
      /comparator\.value: must be a number/,
    );
    await refused(file({ prometheus: 'up', url, below: 1, every: '100ms' }), /^expect\[0\]\.every: at least 500ms/);
    await refused(file({ prometheus: '   ', url, below: 1 }), /^expect\[0\]\.prometheus: a PromQL query/);
    await refused(file({ prometheus: 'up', url, below: 1, bogus: 1 }), /^expect\[0\]: not a form this field takes/);
    await refused(
      { title: 'x', duration: '2s', abort_when: { prometheus: 'up', url, above: 1, for: '100ms' } },
      /^abort_when\.for: at least one poll/,
    );
  });

  test("the example's PromQL variant validates: Prometheus accepts every query", async () => {
    const text = readFileSync(join(repoRoot, 'examples', 'experiment', 'weather-promql.yaml'), 'utf8');
    const raw = await parseExperimentText(text.replace('http://127.0.0.1:9090', prometheus.url));
    const experiment = await readExperiment(raw, { limits, policy, env: {} });
    assert.equal(experiment.expectations.filter((e) => e.kind === 'promql').length, 5);
    assert.equal(experiment.abort[0]!.kind, 'promql');
    assert.equal(experiment.abort[0]!.kind === 'promql' && experiment.abort[0]!.polls, 3);
  });

  test('a Prometheus that does not answer yet is no refusal: the query is asked when the run is', async () => {
    const closed = await freePort();
    const experiment = await readExperiment(file({ prometheus: 'up', url: `http://127.0.0.1:${closed}`, below: 1 }), {
      limits,
      policy,
      env: {},
    });
    assert.equal(experiment.expectations[0]!.kind, 'promql');
  });
});
