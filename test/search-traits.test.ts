/**
 * The local store ranks without reading its candidates' text: what ranking needs of the text (an
 * empty stub, an internal definition: tokens.ts chunkTraits) is worked out when a chunk is indexed
 * and kept in its row. These tests hold the stored traits to the query-time definition, on every
 * chunk of a tree written to have both kinds in each language that has them, indexed on a pool of
 * workers and on the indexer's own thread; and an index of the format before (no traits) still
 * gives the same hits, until the next run rebuilds it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { closeReaders } from '../src/search/sqlite-store.js';
import { indexSourceTree, searchIndex } from '../src/search/index.js';
import { chunkTraits, INTERNAL_TRAIT, STUB_TRAIT } from '../src/search/tokens.js';
import type { ChunkKind } from '../src/code/chunk.js';
import { scratchTree, type ScratchTree } from './helpers/index-tree.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;

/** Sources with stubs and internal definitions (and their opposites) in the languages that have them. */
function writeSources(tree: ScratchTree): void {
  tree.write(
    'shapes/base.py',
    [
      'import abc',
      '',
      'class Shape(abc.ABC):',
      '    @abc.abstractmethod',
      '    def area(self):',
      '        """The area of the shape."""',
      '',
      '    def perimeter(self) -> float:',
      '        raise NotImplementedError',
      '',
      '    def describe(self):',
      '        return f"{type(self).__name__} of area {self.area()}"',
      '',
      '    def _scale(self, factor):',
      '        ...',
      '',
      'def _helper_area(width, height):',
      '    return width * height',
      '',
      'def __dunder_is_not_internal__():',
      '    pass',
      '',
    ].join('\n'),
  );
  tree.write(
    'shapes/square.py',
    'from .base import Shape\n\nclass Square(Shape):\n    def area(self):\n        return self.side ** 2\n',
  );
  tree.write(
    'web/shapes.ts',
    [
      'export function area(width: number): number;',
      'export function area(width: number, height?: number): number {',
      '  return width * (height ?? width);',
      '}',
      '',
      'function hiddenArea(width: number): number {',
      '  return width * width;',
      '}',
      '',
      'export class Canvas {',
      '  private redraw(): void {',
      '    this.count++;',
      '  }',
      '',
      '  /** Clears it: a no-op, whose empty block is still a body. */',
      '  public clear(): void {}',
      '',
      '  #paint(): void {',
      '    this.count--;',
      '  }',
      '  count = 0;',
      '}',
      '',
    ].join('\n'),
  );
  tree.write(
    'web/tax.ts',
    [
      'export const computeTax = (amount: number) => amount * 0.2',
      'export abstract class Levy {',
      '  abstract levy(amount: number): number;',
      '}',
      'export function fee(amount: number): number;',
      'export function fee<T = number>(amount: T, cb: (x: T) => void): () => void;',
      '',
    ].join('\n'),
  );
  tree.write(
    'lua/shapes.lua',
    'local M = {}\nlocal function big_one(a)\n  return a * 2\nend\nfunction M:method(x)\n  return x\nend\nreturn M\n',
  );
  tree.write(
    'kt/Greeter.kt',
    [
      'class Greeter {',
      '  fun greet() = "hi"',
      '  suspend fun later() { }',
      '  fun make(): Greeter = Greeter()',
      '}',
      'interface Named {',
      '  fun name(suffix: String = "!"): String',
      '}',
      '',
    ].join('\n'),
  );
  tree.write(
    'lib/shapes.go',
    'package lib\n\nfunc Area(w int) int {\n\treturn w * w\n}\n\nfunc scale(w int) int {\n\treturn w * 2\n}\n',
  );
}

interface Row {
  path: string;
  symbol: string;
  kind: ChunkKind;
  language: string;
  text: string;
  traits: number;
}

function storeFile(store: string): string {
  return store.replace(/^local index /, '');
}

function rows(file: string): Row[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare('SELECT path, symbol, kind, language, text, traits FROM chunks ORDER BY path, symbol')
      .all() as Row[];
  } finally {
    db.close();
  }
}

for (const workers of [1, 2]) {
  test(`each chunk's stored traits are chunkTraits of its text (a pool of ${workers})`, async (t) => {
    const tree = scratchTree();
    t.after(() => {
      closeReaders();
      tree.cleanup();
    });
    writeSources(tree);
    const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir, workers });
    const stored = rows(storeFile(stats.store));
    assert.equal(stored.length, stats.chunks);
    for (const row of stored) assert.equal(row.traits, chunkTraits(row), `${row.path} ${row.symbol}`);
    // Both traits occur, in more than one language, and the definitions that have neither too.
    const named = (trait: number) =>
      stored.filter((row) => (row.traits & trait) !== 0).map((row) => `${row.language} ${row.symbol}`);
    const stubs = named(STUB_TRAIT);
    const internal = named(INTERNAL_TRAIT);
    for (const expected of [
      'python Shape.area',
      'python Shape.perimeter',
      'typescript Levy.levy',
      'typescript fee',
      'kotlin Named.name',
    ])
      assert.ok(stubs.includes(expected), `${expected} in ${stubs.join(', ')}`);
    for (const expected of ['python _helper_area', 'typescript hiddenArea', 'typescript Canvas.redraw', 'go scale'])
      assert.ok(internal.includes(expected), `${expected} in ${internal.join(', ')}`);
    assert.ok(internal.includes('python Shape._scale') && stubs.includes('python Shape._scale'), 'both traits at once');
    const all = stored.map((row) => `${row.language} ${row.symbol}`);
    for (const neither of [
      'python Square.area',
      'python Shape.describe',
      'go Area',
      'typescript area',
      'typescript Canvas.clear',
      'typescript computeTax',
      'lua big_one',
      'lua M.method',
      'kotlin Greeter.greet',
      'kotlin Greeter.later',
      'kotlin Greeter.make',
    ]) {
      assert.ok(all.includes(neither), `${neither} in ${all.join(', ')}`);
      assert.ok(!stubs.includes(neither) && !internal.includes(neither), neither);
    }
    assert.ok(!internal.includes('python __dunder_is_not_internal__'));
  });
}

test('an index of the format before (no traits) gives the same hits until the next run rebuilds it', async (t) => {
  const tree = scratchTree();
  t.after(() => {
    closeReaders();
    tree.cleanup();
  });
  writeSources(tree);
  const stats = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  const file = storeFile(stats.store);
  const queries = ['area', 'Shape.area', 'the area of the shape', 'scale', 'redraw the canvas', 'hidden area'];
  const search = async () =>
    Promise.all(queries.map((query) => searchIndex(tree.settings, { query, sourceDir: tree.dir, limit: 10 })));
  const before = await search();
  assert.ok(before.every((hits) => hits.length > 0));
  assert.ok(
    before.some((hits) => hits.some((hit) => hit.symbol === 'Shape.area')),
    'a stub among the hits, ranked by its trait',
  );
  closeReaders();

  // What the previous version wrote: the same rows without the traits column.
  const db = new Database(file);
  db.exec("ALTER TABLE chunks DROP COLUMN traits; UPDATE meta SET value = 'faultline-sqlite-6' WHERE key = 'format'");
  db.close();
  assert.deepEqual(await search(), before, 'read with the traits worked out from the text');
  closeReaders();

  const again = await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  assert.equal(again.changed, again.files, 'the run rebuilt the index whole');
  const check = new Database(file, { readonly: true });
  const format = check.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get();
  check.close();
  assert.equal(format, 'faultline-sqlite-7');
  for (const row of rows(file)) assert.equal(row.traits, chunkTraits(row), `${row.path} ${row.symbol}`);
  assert.deepEqual(await search(), before);
});

test("a query that is a definition's name scores 1 whatever the form of its body, a declaration less", async (t) => {
  const tree = scratchTree();
  t.after(() => {
    closeReaders();
    tree.cleanup();
  });
  writeSources(tree);
  await indexSourceTree(tree.settings, { sourceDir: tree.dir });
  const first = async (query: string) =>
    (await searchIndex(tree.settings, { query, sourceDir: tree.dir, limit: 3 }))[0];
  for (const [query, symbol] of [
    ['big_one', 'big_one'],
    ['computeTax', 'computeTax'],
    ['greet', 'Greeter.greet'],
    ['later', 'Greeter.later'],
    ['make', 'Greeter.make'],
    ['clear', 'Canvas.clear'],
  ]) {
    const hit = await first(query!);
    assert.equal(hit?.symbol, symbol, query);
    assert.equal(hit?.score, 1, query);
  }
  // Lua's method as written (`M:method`) names the same definition as `M.method`.
  for (const query of ['M:method', 'M.method', 'method']) {
    const hit = await first(query);
    assert.equal(hit?.symbol, 'M.method', query);
    assert.equal(hit?.score, 1, query);
  }
  const levies = await searchIndex(tree.settings, { query: 'levy', sourceDir: tree.dir, limit: 5 });
  const levy = levies.find((hit) => hit.symbol === 'Levy.levy');
  assert.ok(levy !== undefined && levy.score < 1, 'an abstract method still ranks as a stub');
});
