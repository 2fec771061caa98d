import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, formatDuration } from '../src/duration.js';
import { InputError } from '../src/kernel/errors.js';

test('parses the forms people write', () => {
  const cases: Array<[string, number]> = [
    ['500ms', 500],
    ['10s', 10_000],
    ['1m', 60_000],
    ['1m30s', 90_000],
    ['1m 30s', 90_000],
    ['1h', 3_600_000],
    ['1.5s', 1500],
    ['2 minutes', 120_000],
    ['90', 90_000],
    [' 10S ', 10_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test('refuses what is not a duration, naming the argument', () => {
  for (const bad of ['', 'ten seconds', '10x', '-1s', '1s2', 's', '1,5s']) {
    assert.throws(
      () => parseDuration(bad, 'duration'),
      (error: unknown) => {
        assert.ok(error instanceof InputError);
        assert.match(error.message, /^duration: /);
        assert.match(error.message, /1m30s/);
        return true;
      },
      bad,
    );
  }
});

test('formats back', () => {
  assert.equal(formatDuration(500), '500ms');
  assert.equal(formatDuration(10_000), '10s');
  assert.equal(formatDuration(90_000), '1m30s');
  assert.equal(formatDuration(120_000), '2m');
});
