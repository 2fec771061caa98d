/** Which failures are bugs (logged with their stack) and which are expected (one log line). */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { CancelledError, OperationalError, InputError, isOperational } from '../src/kernel/errors.js';
import { IndexError } from '../src/search/errors.js';

test(
  'operational failures: our OperationalError and its kinds, and ' + 'Node system errors; not bugs or argument errors',
  async () => {
    assert.ok(isOperational(new OperationalError('store unreachable')));
    assert.ok(isOperational(new IndexError('no source tree has been indexed')));
    const child = spawn('/nonexistent/faultline-test-command');
    const [spawnError] = (await once(child, 'error')) as [Error];
    assert.ok(isOperational(spawnError), String(spawnError));
    for (const bug of [
      new TypeError('x is undefined'),
      new InputError('limit: bad'),
      new CancelledError(),
      'a string',
      undefined,
    ]) {
      assert.equal(isOperational(bug), false, String(bug));
    }
  },
);
