/**
 * Re-parsing a document's next version incrementally (from its kept tree) gives exactly what a
 * fresh parse gives: definitions, their lines and offsets, bodies and syntax errors, over
 * sequences of random edits to real-shaped files in every language (insertions, deletions,
 * replacements, a new function, text with astral characters, edits that break and then repair
 * the syntax). And the trees kept for that are bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findDefinitions } from '../src/code/definitions.js';
import { keptTreeCount, withTree } from '../src/code/grammar.js';
import { languageForPath, listDefinitions, type LanguageInfo } from '../src/code/index.js';
import { summariseSyntaxErrors } from '../src/code/syntax-errors.js';
import { editBetween } from '../src/code/source-edit.js';

const fixtures = fileURLToPath(new URL('../../test/fixtures/code/', import.meta.url));

/** A deterministic generator, so a failure names a sequence that can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const INSERTS = [
  '\n',
  ' ',
  'x',
  '// note 😀\n',
  '# note\n',
  '{',
  '}',
  '(',
  'é',
  '\n\n\n',
  'return 1;',
  'def g():\n    pass\n',
  'function g() { return 2; }\n',
];

function randomEdit(source: string, next: () => number): string {
  const at = Math.floor(next() * (source.length + 1));
  const choice = next();
  if (choice < 0.4) return source.slice(0, at) + INSERTS[Math.floor(next() * INSERTS.length)] + source.slice(at);
  const length = Math.floor(next() * 40);
  if (choice < 0.7) return source.slice(0, at) + source.slice(at + length);
  return source.slice(0, at) + INSERTS[Math.floor(next() * INSERTS.length)] + source.slice(at + length);
}

/** What a fresh parse finds (no kept tree, no definition cache). */
async function fresh(source: string, info: LanguageInfo) {
  return withTree(source, info, (tree, grammar) => ({
    language: info.name,
    definitions: findDefinitions(tree, grammar, info, source),
    syntaxErrors: summariseSyntaxErrors(tree.rootNode),
  }));
}

test('incremental re-parses of edited files find what fresh parses find, in every language', async () => {
  const files = readdirSync(fixtures).filter((name) => languageForPath(name));
  assert.ok(files.length >= 12, `expected the code fixtures, found ${files.length}`);
  let compared = 0;
  for (const [fileIndex, name] of files.entries()) {
    const info = languageForPath(name)!;
    const document = join('/virtual', name);
    const next = random(fileIndex + 1);
    let source = readFileSync(join(fixtures, name), 'utf8');
    for (let step = 0; step < 12; step++) {
      const incremental = await listDefinitions(source, info, { document });
      assert.deepEqual(incremental, await fresh(source, info), `${name}, after ${step} edits (seed ${fileIndex + 1})`);
      compared++;
      source = randomEdit(source, next);
    }
  }
  assert.ok(compared >= files.length * 12);
});

test('a kept tree of another language is not used for the same document', async () => {
  const document = '/virtual/renamed';
  const python = 'def f():\n    return 1\n';
  await listDefinitions(python, 'python', { document });
  const js = 'function f() {\n  return 1;\n}\n';
  const list = await listDefinitions(js, 'javascript', { document });
  assert.deepEqual(
    list.definitions.map((definition) => [definition.qualifiedName, definition.startLine, definition.endLine]),
    [['f', 1, 3]],
  );
});

test('at most a few document trees are kept', async () => {
  for (let index = 0; index < 20; index++) {
    await listDefinitions(`def f${index}():\n    return ${index}\n`, 'python', {
      document: `/virtual/many-${index}.py`,
    });
  }
  assert.ok(keptTreeCount() <= 8, `kept ${keptTreeCount()} trees`);
});

test('the edit between two versions is the changed span, with rows and columns in UTF-16 units', () => {
  assert.deepEqual(editBetween('ab\ncd\nef', 'ab\ncXd\nef'), {
    startIndex: 4,
    oldEndIndex: 4,
    newEndIndex: 5,
    startPosition: { row: 1, column: 1 },
    oldEndPosition: { row: 1, column: 1 },
    newEndPosition: { row: 1, column: 2 },
  });
  // A deletion across a line break.
  assert.deepEqual(editBetween('ab\ncd', 'ad'), {
    startIndex: 1,
    oldEndIndex: 4,
    newEndIndex: 1,
    startPosition: { row: 0, column: 1 },
    oldEndPosition: { row: 1, column: 1 },
    newEndPosition: { row: 0, column: 1 },
  });
  // Two emoji sharing their high surrogate: the edit covers the whole character.
  const edit = editBetween('x😀y', 'x😁y');
  assert.equal(edit.startIndex, 1);
  assert.equal(edit.oldEndIndex, 3);
  assert.equal(edit.newEndIndex, 3);
  // No change at all: an empty edit at the end.
  assert.equal(editBetween('same', 'same').startIndex, 4);
});
