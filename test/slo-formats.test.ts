/**
 * The OpenSLO and Sloth conversions on SLOs the fault shape accepts but that sit at the edges of
 * the target formats' rules (what OpenSLO v1 and Sloth prometheus/v1 accept): each must either convert into a
 * document those rules accept, or be left out with the reason — never an internal error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkOpenSlo, checkSloth, toOpenSlo, toSloth } from '../src/llm/slo-formats.js';
import type { Slo } from '../src/llm/slo.js';
import { checkPromQL } from '../src/llm/promql.js';

const AVAILABILITY = {
  type: 'availability',
  title: 'Checkout availability',
  objective: 99.5,
  explanation: 'A failed checkout loses the order.',
  threshold: 99.5,
  unit: '%',
  window: '300s',
  sli: {
    prometheus: 'sum(rate(http_requests_total{code!~"5.."}[5m])) / sum(rate(http_requests_total[5m]))',
    'gcp/cloudrun': {} as Slo['sli']['gcp/cloudrun'],
  },
} as Slo;

const LATENCY_P99 = {
  ...AVAILABILITY,
  type: 'latency',
  title: 'Checkout p99',
  objective: 99,
  threshold: 350,
  unit: 'ms',
  sli: {
    ...AVAILABILITY.sli,
    prometheus: 'histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket[5m])) by (le))',
  },
} as Slo;

test('a one-character title still makes a Sloth name (two characters at least)', () => {
  const { spec, skipped } = toSloth([{ ...AVAILABILITY, title: 'A' }], 'shop');
  assert.deepEqual(skipped, []);
  assert.equal(spec.slos.length, 1);
  assert.match(spec.slos[0]!.name, /^[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]$/);
  assert.equal(checkSloth(spec), undefined);
  const [document] = toOpenSlo([{ ...AVAILABILITY, title: 'A' }], 'shop');
  assert.equal(checkOpenSlo(document!), undefined);
});

test('an objective of 0 is left out of the Sloth spec with the reason, not an internal error', () => {
  const { spec, skipped } = toSloth([{ ...AVAILABILITY, objective: 0 }, AVAILABILITY], 'shop');
  assert.equal(spec.slos.length, 1);
  assert.equal(spec.slos[0]!.objective, 99.5);
  assert.equal(skipped.length, 1);
  assert.match(skipped[0]!, /objective is 0.*above 0/);
});

test('an objective just under 100 stays an OpenSLO target under 1', () => {
  const [document] = toOpenSlo([{ ...AVAILABILITY, objective: 99.99999999 }], 'shop');
  const target = (document!.spec.objectives as Array<{ target: number }>)[0]!.target;
  assert.ok(target < 1 && target > 0.9999999, String(target));
  assert.equal(checkOpenSlo(document!), undefined);
});

test('a latency threshold is given in the unit of the histogram the quantile reads', () => {
  const value = (slo: Slo): unknown =>
    (toOpenSlo([slo], 'shop')[0]!.spec.objectives as Array<{ value: unknown }>)[0]!.value;
  // 350 ms over a _seconds histogram: the quantile is compared with 0.35, not 350.
  assert.equal(value(LATENCY_P99), 0.35);
  assert.equal(value({ ...LATENCY_P99, threshold: 0.35, unit: 's' }), 0.35);
  const millis = 'histogram_quantile(0.99, sum(rate(rpc_duration_milliseconds_bucket[5m])) by (le))';
  assert.equal(value({ ...LATENCY_P99, sli: { ...LATENCY_P99.sli, prometheus: millis } }), 350);
  assert.equal(
    value({ ...LATENCY_P99, threshold: 2, unit: 's', sli: { ...LATENCY_P99.sli, prometheus: millis } }),
    2000,
  );
  // A metric whose name says no unit keeps the SLO's.
  const unnamed = 'histogram_quantile(0.99, sum(rate(checkout_latency_bucket[5m])) by (le))';
  assert.equal(value({ ...LATENCY_P99, sli: { ...LATENCY_P99.sli, prometheus: unnamed } }), 350);
});

test('a subquery keeps its step when its range becomes {{.window}} (a range on a function call does not parse)', () => {
  const prometheus =
    '1 - avg_over_time((sum(rate(http_requests_total{code=~"5.."}[5m])) / sum(rate(http_requests_total[5m])))[30m:1m])';
  const { spec } = toSloth([{ ...AVAILABILITY, type: 'error', sli: { ...AVAILABILITY.sli, prometheus } }], 'shop');
  assert.equal(
    spec.slos[0]!.sli.raw.error_ratio_query,
    '1 - ' +
      'avg_over_time((sum(rate(http_requests_total{code=~"5.."}[{{.window}}])) ' +
      '/ sum(rate(http_requests_total[{{.window}}])))[{{.window}}:1m])',
  );
  // Templated as Sloth does, the query is PromQL that parses.
  assert.equal(checkPromQL(spec.slos[0]!.sli.raw.error_ratio_query.replaceAll('{{.window}}', '5m')), undefined);
});
