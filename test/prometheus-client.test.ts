/**
 * The Prometheus API client against a loopback server speaking the API's shapes: credentials from
 * the environment only, bounded answers and timeouts, every outcome told apart (a query error,
 * an HTTP error, no series, NaN), and conditions in both spellings. The real Prometheus is in
 * experiment-promql.test.ts.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { InputError } from '../src/kernel/errors.js';
import {
  authFor,
  authFromEnv,
  judgeSamples,
  PrometheusClient,
  readCondition,
  type QueryOutcome,
} from '../src/prometheus/index.js';

let server: http.Server;
let url: string;
const seen: Array<{ path: string; authorization: string | undefined; body: string }> = [];
let reply: (body: string) => { status: number; text: string } = () => ({ status: 200, text: '{}' });

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const { status, text } = reply(body);
      if (status === 0) return; // never answers
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prefix`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const vector = (...values: Array<[Record<string, string>, string]>) =>
  JSON.stringify({
    status: 'success',
    data: { resultType: 'vector', result: values.map(([metric, value]) => ({ metric, value: [1700000000.5, value] })) },
  });

describe('PrometheusClient', () => {
  test('sends the query and the credentials from the environment, under the path prefix', async () => {
    reply = () => ({ status: 200, text: vector([{ code: '500' }, '0.25']) });
    const bearer = new PrometheusClient({ url, auth: authFromEnv({ FAULTLINE_PROMETHEUS_TOKEN: 'tok' }) });
    const outcome = await bearer.query('up', new Date(1_700_000_000_000));
    assert.deepEqual(outcome, { ok: true, samples: [{ labels: { code: '500' }, time: 1700000000.5, value: 0.25 }] });
    const last = seen.at(-1)!;
    assert.equal(last.path, '/prefix/api/v1/query');
    assert.equal(last.authorization, 'Bearer tok');
    assert.equal(new URLSearchParams(last.body).get('query'), 'up');
    assert.equal(new URLSearchParams(last.body).get('time'), '1700000000.000');
    const basic = new PrometheusClient({
      url,
      auth: authFromEnv({ FAULTLINE_PROMETHEUS_USERNAME: 'u', FAULTLINE_PROMETHEUS_PASSWORD: 'p w' }),
    });
    await basic.queryRange('up', new Date(0), new Date(10_000), 1000);
    assert.equal(seen.at(-1)!.path, '/prefix/api/v1/query_range');
    assert.equal(seen.at(-1)!.authorization, `Basic ${Buffer.from('u:p w').toString('base64')}`);
    assert.equal(new URLSearchParams(seen.at(-1)!.body).get('step'), '1s');
    await new PrometheusClient({ url, auth: authFromEnv({}) }).query('up');
    assert.equal(seen.at(-1)!.authorization, undefined, 'no variable, no header');
    assert.throws(() => authFromEnv({ FAULTLINE_PROMETHEUS_USERNAME: 'u' }), InputError);
  });

  test("credentials go only to FAULTLINE_PROMETHEUS_URL's origin, never to a URL from a file", () => {
    const env = { FAULTLINE_PROMETHEUS_URL: 'http://127.0.0.1:9090', FAULTLINE_PROMETHEUS_TOKEN: 't' };
    assert.deepEqual(authFor('http://127.0.0.1:9090/prefix', env), { kind: 'bearer', token: 't' });
    assert.equal(authFor('http://127.0.0.1:9091', env), undefined);
    assert.equal(authFor('https://127.0.0.1:9090', env), undefined);
    assert.equal(authFor('http://127.0.0.1:9090', { FAULTLINE_PROMETHEUS_TOKEN: 't' }), undefined);
  });

  test('tells every outcome apart', async () => {
    const client = new PrometheusClient({ url, timeoutMs: 300 });
    const cases: Array<[{ status: number; text: string }, { ok: boolean; kind: string; message: RegExp }]> = [
      [
        { status: 400, text: JSON.stringify({ status: 'error', errorType: 'bad_data', error: '1:5: parse error' }) },
        { ok: false, kind: 'query', message: /^bad_data: 1:5: parse error/ },
      ],
      [
        { status: 401, text: 'Unauthorized' },
        { ok: false, kind: 'http', message: /HTTP 401/ },
      ],
      [
        { status: 200, text: '<html>' },
        { ok: false, kind: 'unreachable', message: /not the Prometheus API/ },
      ],
      [
        { status: 200, text: JSON.stringify({ status: 'success', data: { resultType: 'string', result: [1, 'x'] } }) },
        { ok: false, kind: 'query', message: /not a number/ },
      ],
      [
        { status: 0, text: '' },
        { ok: false, kind: 'unreachable', message: /no answer within 300 ms/ },
      ],
    ];
    for (const [answer, expected] of cases) {
      reply = () => answer;
      const outcome = await client.query('x');
      assert.equal(outcome.ok, expected.ok, JSON.stringify(outcome));
      if (!outcome.ok) {
        assert.equal(outcome.kind, expected.kind, outcome.message);
        assert.match(outcome.message, expected.message);
      }
    }
    reply = () => ({ status: 200, text: `${vector()}${' '.repeat(5 * 1024 * 1024)}` });
    const big = await new PrometheusClient({ url, timeoutMs: 10_000 }).query('x');
    assert.ok(!big.ok && big.kind === 'unreachable' && /above 4194304 bytes/.test(big.message), JSON.stringify(big));
    const closed = await new PrometheusClient({ url: 'http://127.0.0.1:1' }).query('x');
    assert.ok(!closed.ok && closed.kind === 'unreachable' && /ECONNREFUSED/.test(closed.message));
  });
});

describe('conditions and readings', () => {
  const outcome = (...values: string[]): QueryOutcome => ({
    ok: true,
    samples: values.map((value, i) => ({ labels: { instance: `i${i}` }, time: 0, value: Number(value) })),
  });

  test('every series must hold; empty and NaN are unknown, never held', () => {
    const below = readCondition({ below: 0.1 }, 'e');
    assert.equal(judgeSamples(outcome('0.01', '0.05'), below).state, 'held');
    const broken = judgeSamples(outcome('0.01', '0.5'), below);
    assert.equal(broken.state, 'broken');
    assert.match(broken.detail, /^0\.5 \(\{instance="i1"\}\), not < 0\.1$/);
    assert.equal(judgeSamples(outcome(), below).state, 'unknown');
    assert.equal(judgeSamples(outcome('NaN'), below).state, 'unknown');
    assert.equal(judgeSamples({ ok: false, kind: 'unreachable', message: 'x' }, below).state, 'unknown');
  });

  test("faultline's spelling and Litmus promProbe's comparator", () => {
    const between = readCondition({ between: [1, 2] }, 'e');
    assert.equal(between.text, 'between 1 and 2');
    assert.equal(judgeSamples(outcome('2'), between).state, 'held');
    assert.equal(judgeSamples(outcome('2.1'), between).state, 'broken');
    const litmus = readCondition({ comparator: { type: 'float', criteria: '>=', value: '500' } }, 'e');
    assert.equal(judgeSamples(outcome('500'), litmus).state, 'held');
    assert.equal(judgeSamples(outcome('499'), litmus).state, 'broken');
    const oneOf = readCondition({ comparator: { criteria: 'oneOf', value: '1,2, 3' } }, 'e');
    assert.equal(judgeSamples(outcome('3'), oneOf).state, 'held');
    assert.equal(judgeSamples(outcome('4'), oneOf).state, 'broken');
    const both = readCondition({ above: 1, below: 5 }, 'e');
    assert.equal(both.text, '< 5 and > 1');
    assert.throws(
      () => readCondition({ comparator: { criteria: '>=', value: '1', type: 'string' } }, 'e'),
      /float or int/,
    );
  });
});
