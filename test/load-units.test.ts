/**
 * The load generator's pure parts: the HTTP/1.1 response parser (every framing, fed whole and
 * byte by byte), R-6 percentiles and stats, request bytes, and option validation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InputError } from '../src/kernel/errors.js';
import { computeStats, percentileR6, runCapacity, runOpenLoop, selectPercentiles } from '../src/load/index.js';
import { resolveTarget } from '../src/load/options.js';
import { buildRequest } from '../src/load/request.js';
import { ResponseParser, ResponseProtocolError } from '../src/load/response-parser.js';

/** Feeds the text whole and then one byte at a time; both must agree. */
function parse(
  text: string,
  bodyAllowed = true,
): { status: number; keepAlive: boolean; complete: boolean; afterClose: boolean }[] {
  const bytes = Buffer.from(text, 'latin1');
  const whole = new ResponseParser(bodyAllowed);
  whole.feed(bytes);
  const byByte = new ResponseParser(bodyAllowed);
  for (const byte of bytes) {
    if (byByte.complete) break;
    byByte.feed(Buffer.from([byte]));
  }
  return [whole, byByte].map((parser) => ({
    status: parser.status,
    keepAlive: parser.keepAlive,
    complete: parser.complete,
    afterClose: parser.closed(),
  }));
}

describe('response parser', () => {
  test('content-length', () => {
    for (const result of parse('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello')) {
      assert.deepEqual(result, { status: 200, keepAlive: true, complete: true, afterClose: true });
    }
    for (const result of parse('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhell')) {
      assert.equal(result.complete, false);
      assert.equal(result.afterClose, false); // closed short of its length: a reset
    }
  });

  test('chunked, with extensions and trailers', () => {
    const text =
      'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n1\r\n!\r\n0\r\nX-Trailer: 1\r\n\r\n';
    for (const result of parse(text))
      assert.deepEqual(result, { status: 201, keepAlive: true, complete: true, afterClose: true });
    for (const result of parse(text.slice(0, -2))) assert.equal(result.complete, false);
  });

  test('close-delimited body ends at the close; connection: close and HTTP/1.0 are not reused', () => {
    for (const result of parse('HTTP/1.1 200 OK\r\n\r\nuntil the end')) {
      assert.deepEqual(result, { status: 200, keepAlive: false, complete: false, afterClose: true });
    }
    for (const result of parse('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')) {
      assert.deepEqual(result, { status: 200, keepAlive: false, complete: true, afterClose: true });
    }
    for (const result of parse('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')) assert.equal(result.keepAlive, false);
    for (const result of parse('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n'))
      assert.equal(result.keepAlive, true);
  });

  test('no body: HEAD, 204, 304; interim 1xx responses are skipped', () => {
    for (const result of parse('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n', false))
      assert.equal(result.complete, true);
    for (const result of parse('HTTP/1.1 204 No Content\r\n\r\n')) assert.deepEqual(result.complete, true);
    for (const result of parse('HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n'))
      assert.deepEqual(result.complete, true);
    for (const result of parse(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: ' +
        'x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    )) {
      assert.deepEqual(result, { status: 200, keepAlive: true, complete: true, afterClose: true });
    }
  });

  test('bytes after the response mark the connection not reusable', () => {
    const parser = new ResponseParser(true);
    assert.equal(parser.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA')), true);
    assert.equal(parser.keepAlive, false);
  });

  test('malformed responses throw ResponseProtocolError', () => {
    for (const text of [
      'SMTP ready\r\n\r\n',
      'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n',
      'HTTP/1.1 101 Switching Protocols\r\n\r\n',
    ]) {
      assert.throws(() => new ResponseParser(true).feed(Buffer.from(text)), ResponseProtocolError, text);
    }
    assert.throws(() => new ResponseParser(true).feed(Buffer.alloc(70 * 1024, 'a')), ResponseProtocolError);
  });
});

describe('percentiles', () => {
  test('R-6 on known values', () => {
    const sorted = [15, 20, 35, 40, 50];
    // h = 6p: p25 → 1.5 → 15 + 0.5·5; p50 → 3 → 35; p75 → 4.5 → 40 + 0.5·10; p99 → 5.94 ≥ n → 50.
    assert.equal(percentileR6(sorted, 25), 17.5);
    assert.equal(percentileR6(sorted, 50), 35);
    assert.equal(percentileR6(sorted, 75), 45);
    assert.equal(percentileR6(sorted, 99), 50);
    assert.equal(percentileR6(sorted, 1), 15);
    assert.equal(percentileR6([], 50), 0);
  });

  test('selection gives exactly the sorted R-6 percentiles, input untouched', () => {
    // Deterministic inputs of every awkward shape: random, sorted, reversed, constant, few
    // distinct values, tiny lengths. The per-second buckets use selection; reports use sorting.
    let seed = 12345;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 10;
    const shapes: Float64Array[] = [];
    for (const n of [1, 2, 3, 7, 100, 1001]) {
      const random = Float64Array.from({ length: n }, next);
      shapes.push(random, random.slice().sort(), random.slice().sort().reverse(), new Float64Array(n).fill(4.2));
      shapes.push(Float64Array.from({ length: n }, () => Math.floor(next() / 4)));
    }
    const percents = [0, 1, 25, 50, 95, 99, 99.9, 100];
    for (const values of shapes) {
      const before = [...values];
      const sorted = values.slice().sort();
      assert.deepEqual(
        selectPercentiles(values, percents),
        percents.map((p) => percentileR6(sorted, p)),
        `n=${values.length}`,
      );
      assert.deepEqual([...values], before);
    }
    assert.deepEqual(selectPercentiles(new Float64Array(0), [50]), [0]);
  });

  test('stats: true mean, extremes, unsorted input untouched, null when empty', () => {
    const values = Float64Array.from([3, 1, 2, 100]);
    const stats = computeStats(values)!;
    assert.equal(stats.mean, 26.5);
    assert.equal(stats.min, 1);
    assert.equal(stats.max, 100);
    assert.equal(stats.p50, 2.5);
    assert.deepEqual([...values], [3, 1, 2, 100]);
    assert.equal(computeStats([]), null);
    // p99.9 of 1..10000 by R-6: h = 10001·0.999 = 9990.999 → 9990.999.
    const many = Array.from({ length: 10_000 }, (_, i) => i + 1);
    assert.ok(Math.abs(computeStats(many)!.p999 - 9990.999) < 1e-6);
  });
});

describe('request bytes', () => {
  test('GET keeps the URL host and sends no length', () => {
    const bytes = buildRequest(resolveTarget({ url: 'http://[::1]:8080/a/b?q=1#frag' })).toString('latin1');
    assert.equal(bytes, 'GET /a/b?q=1 HTTP/1.1\r\nhost: [::1]:8080\r\n\r\n');
  });

  test('a body is JSON unless a content type is given; POST always has a length; host can be overridden', () => {
    const json = buildRequest(resolveTarget({ url: 'http://h/', method: 'PUT', body: '{}' })).toString('latin1');
    assert.equal(json, 'PUT / HTTP/1.1\r\nhost: h\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
    const text = buildRequest(
      resolveTarget({
        url: 'http://h/',
        method: 'POST',
        body: 'hi',
        headers: { 'Content-Type': 'text/plain', Host: 'other' },
      }),
    );
    assert.equal(
      text.toString('latin1'),
      'POST / HTTP/1.1\r\nhost: other\r\nContent-Type: text/plain\r\ncontent-length: 2\r\n\r\nhi',
    );
    const empty = buildRequest(resolveTarget({ url: 'http://h/', method: 'POST' })).toString('latin1');
    assert.equal(empty, 'POST / HTTP/1.1\r\nhost: h\r\ncontent-length: 0\r\n\r\n');
  });

  test('https: SNI is the URL host name, never an IP address', () => {
    assert.equal(resolveTarget({ url: 'https://api.test/' }).servername, 'api.test');
    assert.equal(resolveTarget({ url: 'https://api.test/' }).connectPort, 443);
    assert.equal(resolveTarget({ url: 'https://127.0.0.1:8443/' }).servername, undefined);
  });
});

describe('validation names the bad argument', () => {
  const good = { url: 'http://127.0.0.1:1/', ratePerSecond: 10, connections: 1, durationMs: 100, timeoutMs: 100 };
  const cases: [string, Record<string, unknown>][] = [
    ['url', { url: 'ftp://127.0.0.1/' }],
    ['url', { url: 'not a url' }],
    ['url', { url: 'http://user:pw@127.0.0.1/' }],
    ['ratePerSecond', { ratePerSecond: 0 }],
    ['ratePerSecond', { ratePerSecond: Number.NaN }],
    ['connections', { connections: 1.5 }],
    ['connections', { connections: 0 }],
    ['durationMs', { durationMs: -1 }],
    ['timeoutMs', { timeoutMs: 0 }],
    ['method', { method: 'GE T' }],
    ['method', { method: 7 }],
    ['headers', { headers: { 'bad name': 'x' } }],
    ['headers.x', { headers: { x: 'a\r\nInjected: 1' } }],
    ['headers.Content-Length', { headers: { 'Content-Length': '3' } }],
    ['body', { body: { a: 1 } }],
    ['connectTo.port', { connectTo: { host: '127.0.0.1', port: 70000 } }],
    ['connectTo.host', { connectTo: { host: '', port: 80 } }],
    ['ratePerSecond × durationMs', { ratePerSecond: 1e6, durationMs: 60_000 }],
    ['onSecond', { onSecond: 'yes' }],
  ];
  for (const [name, change] of cases) {
    test(`${name}: ${JSON.stringify(change)}`, async () => {
      await assert.rejects(
        runOpenLoop({ ...good, ...change } as never),
        (error: Error) => error instanceof InputError && error.message.includes(name),
      );
    });
  }

  test('capacity: timeout below autocannon minimum, https without opting out of verification', async () => {
    const capacity = { url: 'http://127.0.0.1:1/', connections: 1, durationMs: 100, timeoutMs: 1000 };
    await assert.rejects(runCapacity({ ...capacity, timeoutMs: 500 }), /timeoutMs must be at least 1000/);
    await assert.rejects(runCapacity({ ...capacity, url: 'https://127.0.0.1:1/' }), /tls\.rejectUnauthorized: false/);
    await assert.rejects(runCapacity({ ...capacity, connections: 0 }), /connections must be/);
  });
});
