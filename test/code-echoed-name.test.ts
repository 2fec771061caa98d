/** Names the caller sent are echoed in errors only up to a limit, whatever their length. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { extractFunction, FunctionNotFoundError } from '../src/code/index.js';
import { fixturePath } from './helpers/repo.js';

const SOURCE = readFileSync(fixturePath('code', 'sample.py'), 'utf8');
const HUGE = 'x'.repeat(100_000);

test('an unknown 100 kB func is echoed as its first 120 characters and an ellipsis', async () => {
  const error = await extractFunction(SOURCE, 'python', HUGE).then(
    () => assert.fail('a function named xxx… was found'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof FunctionNotFoundError);
  assert.equal(error.func, HUGE, 'the property keeps the whole name');
  assert.ok(error.message.includes(`'${'x'.repeat(120)}…'`), error.message.slice(0, 300));
  assert.ok(error.message.length < 1_000, `message is ${error.message.length} characters`);
  assert.match(error.message, /the file defines: plain/);
});

test('a long func with a :LINE no definition starts at is cut short too', async () => {
  const error = await extractFunction(SOURCE, 'python', `plain${'.x'.repeat(50_000)}:999`).catch(
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof Error);
  assert.ok(error.message.length < 1_000, `message is ${error.message.length} characters`);
  assert.match(error.message, /…/);
});
