import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractJson, jsonCandidates } from '../src/llm/extract-json.js';
import { extractFencedBlocks } from '../src/llm/fences.js';

function value(reply: string): unknown {
  const result = extractJson(reply);
  assert.ok(result.ok, `expected JSON in ${JSON.stringify(reply)}: ${!result.ok ? result.reason : ''}`);
  return result.value;
}

test('bare JSON is taken as is', () => {
  assert.deepEqual(value('{"score": 0.5, "explanation": "ok"}'), { score: 0.5, explanation: 'ok' });
  assert.deepEqual(value('  [1, 2]\n'), [1, 2]);
});

test('a fenced block is unwrapped, whatever its info string', () => {
  assert.deepEqual(value('```json\n{"a": 1}\n```'), { a: 1 });
  assert.deepEqual(value('Here you go:\n```\n{"a": 2}\n```\nHope it helps.'), { a: 2 });
});

test('JSON inside prose is found, braces inside strings do not confuse it', () => {
  assert.deepEqual(value('The result is {"a": "x } y {", "b": [1]} as requested.'), { a: 'x } y {', b: [1] });
});

test('a bracketed aside before the answer is skipped when it is not JSON', () => {
  assert.deepEqual(value('I looked at it [carefully] and {see below}: {"score": 0.2}'), { score: 0.2 });
});

test('a <think> preamble is ignored', () => {
  assert.deepEqual(value('<think>maybe {"score": 9}?</think>{"score": 0.3}'), { score: 0.3 });
});

test('no JSON, or broken JSON, is reported with a reason', () => {
  for (const reply of ['', 'no json here', '{"a": 1', '3.5']) {
    const result = extractJson(reply);
    assert.equal(result.ok, false, reply);
  }
});

test('every JSON value is a candidate, in order, so a schema can skip an aside', () => {
  assert.deepEqual([...jsonCandidates('On a scale [0, 1]: {"score": 0.5}')], [[0, 1], { score: 0.5 }]);
  assert.deepEqual([...jsonCandidates('```json\n{"a": 1}\n```')], [{ a: 1 }, { a: 1 }]);
  assert.deepEqual([...jsonCandidates('nothing here')], []);
});

test('a CRLF reply still has its fences found', () => {
  assert.deepEqual(value('Here:\r\n```json\r\n{"a": [1]}\r\n```\r\n'), { a: [1] });
  assert.deepEqual(extractFencedBlocks('```diff\r\n-a\r\n+b\r\n```\r\n'), [{ info: 'diff', body: '-a\r\n+b\r\n' }]);
});
