/**
 * src/measuring.ts: optional work (the listing thread's warm-up) holds while a run measures. The
 * hold is told once when the first measured run starts and once when the last one ends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { beginMeasuring, onMeasuring } from '../src/measuring.js';

test('measuring is told once at the first start and once at the last end; ending twice counts once', () => {
  const told: boolean[] = [];
  const stop = onMeasuring((measuring) => told.push(measuring));
  try {
    const endFirst = beginMeasuring();
    const endSecond = beginMeasuring();
    endFirst();
    endFirst();
    assert.deepEqual(told, [true], 'one run still measures');
    endSecond();
    assert.deepEqual(told, [true, false]);
  } finally {
    stop();
  }
});

test('a listener added while a run measures is told at once', () => {
  const end = beginMeasuring();
  const told: boolean[] = [];
  const stop = onMeasuring((measuring) => told.push(measuring));
  end();
  stop();
  assert.deepEqual(told, [true, false]);
});
