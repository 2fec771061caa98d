import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPromQL } from '../src/llm/promql.js';

test('well-formed PromQL passes', () => {
  for (const expr of [
    'sum(rate(http_requests_total{code!~"5.."}[5m])) / sum(rate(http_requests_total[5m]))',
    'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[1h30m])))',
    'max_over_time(up[30m:1m])',
    'rate(x{path="/a]b"}[5m]) > 0',
  ]) {
    assert.equal(checkPromQL(expr), undefined, expr);
  }
});

test('what models get wrong is caught with a reason', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /empty/],
    ['sum(rate(http_requests_total[5m])', /unclosed "\("/],
    ['rate(http_requests_total[5m]))', /unmatched "\)"/],
    ['rate(http_requests_total{code="5xx}[5m])', /unclosed " string/],
    ['rate(http_requests_total[5 minutes])', /not a duration/],
    ['rate(http_requests_total{service="<service>"}[5m])', /placeholder/],
    ['sum(rate(http_requests_total[5m])) /', /ends with an operator/],
    ['99.9', /names no metric/],
  ];
  for (const [expr, reason] of cases) assert.match(checkPromQL(expr) ?? 'passed', reason, expr);
});
