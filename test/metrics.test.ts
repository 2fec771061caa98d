/**
 * faultline's own /metrics: the admin API serves the proxy's faults and traffic in Prometheus's
 * text format behind its token; the runner's listener serves the run's metrics behind its token;
 * the histogram's buckets add up. Real sockets on loopback; the Prometheus scrape of both is in
 * experiment-promql.test.ts.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { FaultRegistry, startAdmin, type AdminServer } from '../src/proxy/control/index.js';
import { startProxy, type RunningProxy } from '../src/proxy/index.js';
import { ExperimentMetrics, registerProxyMetrics, startMetricsServer } from '../src/metrics/index.js';
import { startOkApp, type OkApp } from './helpers/ok-app.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProxy } from '../src/commands/proxy.js';
import { freePort } from './fixtures/experiment/stack.js';
import { startCliProcess } from './helpers/processes.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

function get(url: string, token?: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: token ? { authorization: `Bearer ${token}` } : {} }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, type: String(response.headers['content-type']), body }),
      );
    });
    request.on('error', reject);
  });
}

/** The value of one series line in the text format, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics on the admin API', () => {
  let app: OkApp;
  let proxy: RunningProxy;
  let registry: FaultRegistry;
  let admin: AdminServer;
  const token = 'metrics-test-token';

  before(async () => {
    app = await startOkApp();
    proxy = await startProxy({ mappings: [`0=${new URL(app.url).host}#api`], http: true });
    registry = new FaultRegistry(proxy);
    const metrics = new Registry();
    registerProxyMetrics(metrics, () => [{ proxy: 'proxy', counters: proxy.counters() }]);
    admin = await startAdmin({ host: '127.0.0.1', port: 0, token, registry, metrics });
  });
  after(async () => {
    registry.dispose();
    await admin.close();
    await proxy.stop();
    await app.close();
  });

  test('behind the token: 401 without it and with a wrong one', async () => {
    assert.equal((await get(`${admin.url}/metrics`)).status, 401);
    assert.equal((await get(`${admin.url}/metrics`, 'wrong')).status, 401);
  });

  test('a fault that acts shows as active, with its applications, matched requests and the bytes', async () => {
    const id = registry.inject('api', { type: 'error', statusCode: 503 });
    for (let i = 0; i < 5; i++) {
      const answer = await get(`http://127.0.0.1:${proxy.ports[0]}/`);
      assert.equal(answer.status, 503);
    }
    const { status, type, body } = await get(`${admin.url}/metrics`, token);
    assert.equal(status, 200);
    assert.match(type, /^text\/plain; version=0\.0\.4/);
    const labels = `proxy="proxy",fault="${id}",type="error"`;
    assert.equal(sample(body, `faultline_fault_active{${labels},kind="http"}`), 1, body);
    assert.equal(sample(body, `faultline_fault_applications_total{${labels},kind="http"}`), 5);
    assert.equal(sample(body, `faultline_fault_requests_matched_total{${labels}}`), 5);
    const mapping = `proxy="proxy",mapping="0=${new URL(app.url).host}#api"`;
    assert.equal(sample(body, `faultline_proxy_requests_total{${mapping}}`), 5);
    assert.match(body, /# TYPE faultline_fault_applications_total counter/);
    registry.clear(id);
    const cleared = await get(`${admin.url}/metrics`, token);
    assert.equal(sample(cleared.body, `faultline_fault_active{${labels},kind="http"}`), 0, 'retired, not active');
    // Without the fault the request reaches the app: bytes both ways through the mapping.
    assert.equal((await get(`http://127.0.0.1:${proxy.ports[0]}/`)).status, 200);
    const through = await get(`${admin.url}/metrics`, token);
    assert.ok(sample(through.body, `faultline_proxy_bytes_total{${mapping},direction="upstream"}`)! > 0, through.body);
    assert.ok(sample(through.body, `faultline_proxy_bytes_total{${mapping},direction="downstream"}`)! > 0);
    assert.equal(sample(through.body, `faultline_proxy_requests_total{${mapping}}`), 6);
  });

  test('the other routes still answer JSON', async () => {
    const status = await get(`${admin.url}/chaos/status`, token);
    assert.equal(status.status, 200);
    assert.deepEqual(JSON.parse(status.body), { faults: [] });
  });
});

describe("the runner's metrics listener", () => {
  test('serves the run behind its token; the latency histogram adds up', async () => {
    const metrics = new ExperimentMetrics();
    metrics.begin('t', [{ name: 'db slow', fault: 'latency' }], ['errors < 1%'], () => undefined);
    metrics.step('db slow', 'latency', true);
    metrics.second({
      second: 0,
      requests: 4,
      errors: 1,
      p50Ms: 3,
      p95Ms: 30,
      latencyCounts: [1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1],
      latencySumMs: 12_040,
    });
    metrics.states([{ title: 'errors < 1%', status: 'failed' }]);
    const server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      token: 'run-token',
      registry: metrics.registry,
      bind: { argument: '--metrics', what: 'the metrics endpoint', allowNonLoopbackBind: false },
    });
    try {
      assert.equal((await get(server.url)).status, 401);
      assert.equal((await get(server.url.replace('/metrics', '/other'), 'run-token')).status, 404);
      const { status, body } = await get(server.url, 'run-token');
      assert.equal(status, 200);
      assert.equal(sample(body, 'faultline_experiment_step_active{experiment="t",step="db slow",fault="latency"}'), 1);
      assert.equal(
        sample(body, 'faultline_experiment_expectation_state{experiment="t",expectation="errors < 1%",state="failed"}'),
        1,
      );
      assert.equal(
        sample(
          body,
          'faultline_experiment_expectation_state{experiment="t",expectation="errors < 1%",state="pending"}',
        ),
        0,
      );
      assert.equal(sample(body, 'faultline_experiment_load_requests_total{experiment="t"}'), 4);
      assert.equal(sample(body, 'faultline_experiment_load_errors_total{experiment="t"}'), 1);
      const bucket = (le: string) =>
        sample(body, `faultline_experiment_request_duration_seconds_bucket{experiment="t",le="${le}"}`);
      assert.equal(bucket('0.005'), 1);
      assert.equal(bucket('0.01'), 2);
      assert.equal(bucket('0.05'), 3);
      assert.equal(bucket('10'), 3);
      assert.equal(bucket('+Inf'), 4);
      assert.equal(sample(body, 'faultline_experiment_request_duration_seconds_count{experiment="t"}'), 4);
      assert.equal(sample(body, 'faultline_experiment_request_duration_seconds_sum{experiment="t"}'), 12.04);
    } finally {
      await server.close();
    }
  });

  test('a non-loopback bind is refused unless allowed', async () => {
    await assert.rejects(
      startMetricsServer({
        host: '0.0.0.0',
        port: 0,
        token: undefined,
        registry: new Registry(),
        bind: { argument: '--metrics 0.0.0.0:9464', what: 'the metrics endpoint', allowNonLoopbackBind: false },
      }),
      /--metrics 0\.0\.0\.0:9464/,
    );
  });
});

describe('the doors', () => {
  test('faultline proxy --admin serves GET /metrics on the admin port, behind its token', async () => {
    const app = await startOkApp();
    const controller = new AbortController();
    const lines: string[] = [];
    const port = await freePort();
    const running = runProxy(
      { proxy: [`0=${new URL(app.url).host}#api`], admin: `127.0.0.1:${port}`, adminToken: 'door-token' },
      controller.signal,
      (line) => lines.push(line),
    );
    try {
      const deadline = Date.now() + HANG_GUARD_MS; // the proxy's start: a bound, not a figure
      while (!lines.some((line) => line.startsWith('admin API on'))) {
        assert.ok(Date.now() < deadline, lines.join('\n'));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.match(lines.find((line) => line.startsWith('admin API on'))!, /GET \/metrics/);
      assert.equal((await get(`http://127.0.0.1:${port}/metrics`)).status, 401);
      const { status, body } = await get(`http://127.0.0.1:${port}/metrics`, 'door-token');
      assert.equal(status, 200);
      assert.match(body, /faultline_proxy_connections_total\{proxy="proxy",mapping="0=127\.0\.0\.1:\d+#api"\} 0/);
    } finally {
      controller.abort();
      await running;
      await app.close();
    }
  });

  test('faultline experiment run --metrics serves the run while it goes', async () => {
    const app = await startOkApp();
    const dir = mkdtempSync(join(tmpdir(), 'faultline-metrics-run-'));
    const file = join(dir, 'e.yaml');
    writeFileSync(
      file,
      `title: metrics door\nduration: 4s\nexpect:\n  - {http: "GET ` +
        `${app.url}", expect: "status == 200", during: run, name: ok}\n`,
    );
    const port = await freePort();
    const cli = startCliProcess(['experiment', 'run', file, '--metrics', `127.0.0.1:${port}`], {
      FAULTLINE_ADMIN_TOKEN: 'run-door',
    });
    try {
      await cli.waitFor(/metrics on http:\/\/127\.0\.0\.1:\d+\/metrics \(Bearer token from FAULTLINE_ADMIN_TOKEN\)/);
      assert.equal((await get(`http://127.0.0.1:${port}/metrics`)).status, 401);
      const { body } = await get(`http://127.0.0.1:${port}/metrics`, 'run-door');
      assert.equal(
        sample(
          body,
          'faultline_experiment_expectation_state{experiment="metrics door",expectation="ok",state="pending"}',
        ),
        1,
        body,
      );
    } finally {
      await cli.stop();
      rmSync(dir, { recursive: true, force: true });
      await app.close();
    }
  });
});
