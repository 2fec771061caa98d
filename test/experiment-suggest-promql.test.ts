/**
 * `faultline experiment suggest` proposes PromQL checks from the metrics the code registers with
 * a Prometheus client (prom-client, prometheus_client, the Go client), and the suggestion reads
 * back as a valid experiment. Code that only looks alike (collections.Counter) proposes nothing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FileAccess } from '../src/access.js';
import { makeConfig } from '../src/config.js';
import { parseExperimentText, readExperiment } from '../src/experiment/index.js';
import { suggestFromSources } from '../src/experiment/suggest/index.js';
import { repoRoot } from './helpers/repo.js';

const work = mkdtempSync(join(tmpdir(), 'faultline-suggest-promql-'));
after(() => rmSync(work, { recursive: true, force: true }));
const policy = {
  allowRemoteTargets: false,
  allowNonLoopbackBind: false,
  allowProduction: false,
};

function app(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

describe('PromQL checks suggested from the metrics the code registers', () => {
  test('the example app (prom-client): an error ratio by code, a p99 in seconds, a fallback counter', async () => {
    const suggestion = await suggestFromSources(new FileAccess([]), {
      sourceDir: join(repoRoot, 'examples', 'experiment'),
    });
    const text = suggestion.experiment;
    assert.match(
      text,
      /prometheus: sum\(rate\(app_http_requests_total\{code=~"5\.\."\}\[1m\]\)\) \/ sum\(rate\(app_http_requests_total\[1m\]\)\)/,
    );
    assert.match(
      text,
      /histogram_quantile\(0\.99, sum by \(le\) \(rate\(app_http_request_duration_seconds_bucket\[1m\]\)\)\)/,
    );
    assert.match(text, /sum\(rate\(app_weather_fallbacks_total\[1m\]\)\)/);
    assert.match(text, /# {3}app_http_requests_total \(prom-client, app\.mjs:\d+\) counts answers by code/);
    const experiment = await readExperiment(await parseExperimentText(text), {
      limits: makeConfig().scenario,
      policy,
      env: {},
    });
    const promql = experiment.expectations.filter((e) => e.kind === 'promql');
    assert.equal(promql.length, 9, 'three checks, in the steady state twice and in expect once');
  });

  test('prometheus_client and the Go client; collections.Counter is not a metric', async () => {
    const python = app('py', {
      'main.py': [
        'from collections import Counter as Tally',
        'from prometheus_client import Counter, Histogram',
        "words = Counter(['a', 'b'])",
        "REQUESTS = Counter('shop_requests', 'Requests answered', ['status'])",
        "LATENCY = Histogram('shop_request_seconds', 'Latency')",
      ].join('\n'),
    });
    const text = (await suggestFromSources(new FileAccess([]), { sourceDir: python })).experiment;
    assert.match(
      text,
      /sum\(rate\(shop_requests_total\{status=~"5\.\."\}\[1m\]\)\)/,
      'a Counter is exposed with _total',
    );
    assert.match(text, /shop_request_seconds_bucket/);
    assert.match(text, /prometheus_client, main\.py:4/);
    const go = app('go', {
      'main.go': [
        'package main',
        'import ("github.com/prometheus/client_golang/prometheus"; ' +
          '"github.com/prometheus/client_golang/prometheus/promauto")',
        'var reqs = ' +
          'promauto.NewCounterVec(prometheus.CounterOpts{Namespace: "api", ' +
          'Name: "requests_total", Help: "x"}, []string{"code", "path"})',
        'var lat = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "api_latency_seconds", Help: "y"})',
      ].join('\n'),
    });
    const goText = (await suggestFromSources(new FileAccess([]), { sourceDir: go })).experiment;
    assert.match(goText, /sum\(rate\(api_requests_total\{code=~"5\.\."\}\[1m\]\)\)/);
    assert.match(goText, /api_latency_seconds_bucket/);
    assert.match(goText, /client_golang/);
    const plain = app('plain', { 'main.py': "from collections import Counter\nwords = Counter(['a', 'b'])\n" });
    const plainText = (await suggestFromSources(new FileAccess([]), { sourceDir: plain })).experiment;
    assert.doesNotMatch(plainText, /prometheus/);
  });
});
