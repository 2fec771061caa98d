/**
 * The definition cache answers a repeated list or extract on the same source without parsing
 * again, and never answers for a different source, language, or with a list a caller changed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DefinitionCache } from '../src/code/definition-cache.js';
import { extractFunction, listDefinitions } from '../src/code/index.js';

test('a hit returns the same result without computing; another source or language computes', async () => {
  const cache = new DefinitionCache<string>(4, 1_000);
  let computed = 0;
  const compute = (value: string) => async () => {
    computed++;
    return value;
  };
  assert.equal(await cache.get('python', 'def f(): pass', compute('a')), 'a');
  assert.equal(await cache.get('python', 'def f(): pass', compute('b')), 'a');
  assert.equal(computed, 1);
  assert.equal(await cache.get('ruby', 'def f(): pass', compute('c')), 'c');
  assert.equal(await cache.get('python', 'def f(): pass\n', compute('d')), 'd');
  assert.equal(computed, 3);
});

test('the cache is bounded in entries and in source characters, oldest out first', async () => {
  const cache = new DefinitionCache<number>(2, 50);
  let computed = 0;
  const get = (source: string) => cache.get('go', source, async () => ++computed);
  await get('a');
  await get('b');
  await get('a'); // a is now the most recently used
  await get('c'); // evicts b
  assert.equal(computed, 3);
  await get('a');
  assert.equal(computed, 3);
  await get('b');
  assert.equal(computed, 4);
  await get('x'.repeat(100)); // larger than the whole budget: computed, never kept
  await get('x'.repeat(100));
  assert.equal(computed, 6);
});

test('a caller that changes a listed result does not change the next answer', async () => {
  const source = 'def first():\n    return 1\n\ndef second():\n    return 2\n';
  const list = await listDefinitions(source, 'python');
  assert.deepEqual(
    list.definitions.map((d) => d.name),
    ['first', 'second'],
  );
  list.definitions.length = 0;
  const again = await listDefinitions(source, 'python');
  assert.deepEqual(
    again.definitions.map((d) => d.name),
    ['first', 'second'],
  );
  const extracted = await extractFunction(source, 'python', 'second');
  assert.equal(extracted.full, 'def second():\n    return 2');
});
