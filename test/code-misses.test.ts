/**
 * Definitions the code tools used to miss, each on a fixture shaped like the real file it was
 * found in: TypeScript functions merged with a namespace of their name (@types/node's
 * fs.d.ts), JavaScript functions assigned to a variable declared before, members assigned on
 * `this`, comments before a Python body's first statement, and Java anonymous-class methods.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extract, functionsOf } from './helpers/code-fixtures.js';

test('TypeScript: a function merged with a namespace of its name is listed, overloads and all', async () => {
  assert.deepEqual(await functionsOf('merged-fs.d.ts'), [
    'function readFile 4-11',
    'function readFile 12-12',
    'function readFile.__promisify__ 14-14',
    'function writeFile 16-16',
    'function writeFile.__promisify__ 18-18',
    'function stat 20-20',
    'function stat.__promisify__ 22-22',
    'function open 24-24',
    'function open.__promisify__ 26-26',
  ]);
  const first = await extract('merged-fs.d.ts', 'readFile:4');
  assert.match(
    first.full,
    /^ {4}\/\*\*\n {5}\* Asynchronously reads the entire contents of a file\.\n {5}\*\/\n {4}export function readFile\(/,
    'its doc comment is attached to it, not to the namespace',
  );
});

test("JavaScript: functions assigned to declared variables are listed; `this` members are the class's", async () => {
  assert.deepEqual(await functionsOf('assigned.js'), [
    'function baseWrite 5-7',
    'function baseWrite 9-11',
    'function onError 13-15',
    'method Command.exitOverride 18-27',
    'method Command._exitCallback 22-24',
    'function Point 30-34',
    'function Point.norm 31-33',
  ]);
  assert.equal((await extract('assigned.js', 'Command._exitCallback')).body, '{\n        throw err;\n      }');
});

test('Python: comments before the first statement are part of the body', async () => {
  assert.deepEqual(
    await extract('leading_comments.py', 'retry_delay').then((found) => found.body),
    [
      "    # Exponential backoff, capped: the server's own limit is 30 s.",
      '    # (Jitter is added by the caller.)',
      '    return min(30, 2 ** attempt)',
    ].join('\n'),
  );
  assert.equal(
    (await extract('leading_comments.py', 'Reader.read')).body,
    '        # Comments first, then the docstring-less body.\n        return self._buffer',
  );
});

test('Java: methods of an anonymous class are methods, qualified by the type it implements', async () => {
  assert.deepEqual(await functionsOf('Anonymous.java'), [
    'method Scheduler.start 4-16',
    'method Scheduler.start.Runnable.run 6-9',
    'method Scheduler.start.Comparator.compare 12-14',
    'method Scheduler.tick 18-18',
  ]);
});
