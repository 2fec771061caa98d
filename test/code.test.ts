/**
 * src/code through its public API, on the fixture matrix in test/fixtures/code: exact names,
 * qualified names, kinds, lines and extracted text for every supported language.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AmbiguousFunctionError,
  FunctionNotFoundError,
  UnsupportedLanguageError,
  countSyntaxErrors,
  extractFunction,
  languageByName,
  languageForPath,
  listDefinitions,
  listFunctions,
  requireLanguageForPath,
  supportedExtensions,
  supportedLanguages,
} from '../src/code/index.js';
import { InputError } from '../src/kernel/errors.js';
import { extract, fixture, functionsOf } from './helpers/code-fixtures.js';
import { repoRoot } from './helpers/repo.js';

test('every vendored grammar matches its manifest and loads with a compatible ABI', async () => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'grammars', 'manifest.json'), 'utf8')) as {
    grammars: { dir: string; package: string; version: string; files: { name: string; sha256: string }[] }[];
  };
  for (const entry of manifest.grammars) {
    assert.match(entry.version, /^\d+\.\d+\.\d+$/, entry.package);
    for (const file of entry.files) {
      const actual = createHash('sha256')
        .update(readFileSync(join(repoRoot, 'grammars', entry.dir, file.name)))
        .digest('hex');
      assert.equal(actual, file.sha256, `${entry.dir}/${file.name}`);
    }
    // MIT (the notice travels with the binary), or Apache-2.0 (tree-sitter-elixir).
    assert.match(
      readFileSync(join(repoRoot, 'grammars', entry.dir, 'LICENSE'), 'utf8'),
      /Permission is hereby granted|Apache License\s+Version 2\.0/,
      entry.dir,
    );
  }
  // Loading checks the ABI range; an empty source must parse in every language.
  for (const info of supportedLanguages()) {
    const list = await listDefinitions('', info);
    assert.deepEqual(list, { language: info.name, definitions: [], syntaxErrors: { count: 0, firstLines: [] } });
  }
});

test('languages by extension and by name', () => {
  assert.equal(languageForPath('/a/b.PY')?.name, 'python');
  assert.equal(languageForPath('/a/b.pyi')?.name, 'python');
  for (const ext of ['js', 'mjs', 'cjs', 'jsx']) assert.equal(languageForPath(`/x.${ext}`)?.name, 'javascript');
  for (const ext of ['ts', 'mts', 'cts']) assert.equal(languageForPath(`/x.${ext}`)?.name, 'typescript');
  assert.equal(languageForPath('/x.tsx')?.name, 'tsx');
  assert.equal(languageForPath('/x.hpp')?.name, 'cpp');
  assert.equal(languageForPath('/x.txt'), undefined);
  assert.equal(languageForPath('/Makefile'), undefined);
  assert.equal(languageByName('Go')?.name, 'go');
  assert.equal(languageByName('c#')?.name, 'csharp');
  assert.equal(languageByName('c++')?.name, 'cpp');
  assert.equal(languageByName('cobol'), undefined);
  assert.ok(supportedExtensions().includes('.rs'));
  assert.throws(
    () => requireLanguageForPath('/tmp/notes.txt'),
    (error: unknown) => {
      assert.ok(error instanceof UnsupportedLanguageError && error instanceof InputError);
      assert.match(error.message, /notes\.txt has no supported extension; supported: .*\.py .*\.rs/);
      return true;
    },
  );
});

test('Python: decorators, methods, nested functions, lambdas, unicode', async () => {
  assert.deepEqual(await functionsOf('sample.py'), [
    'function plain 4-5',
    'function decorated 8-12',
    'method Greeter.__init__ 18-19',
    'method Greeter.loud 21-23',
    'method Greeter.fetch 25-29',
    'function Greeter.fetch.helper 26-27',
    'function outer 32-36',
    'function outer.inner 33-34',
    'function größe 39-40',
    'function square 43-43',
  ]);
  const decorated = await extract('sample.py', 'decorated');
  assert.equal(
    decorated.full,
    '@functools.lru_cache(maxsize=None)\n@staticmethod\ndef decorated(x):\n    """Docstring."""\n    return x * 2',
  );
  assert.equal(decorated.body, '    """Docstring."""\n    return x * 2');
  assert.deepEqual([decorated.startLine, decorated.endLine, decorated.language], [8, 12, 'python']);
  const loud = await extract('sample.py', 'loud');
  assert.equal(loud.qualifiedName, 'Greeter.loud');
  assert.equal(loud.full, '    @property\n    def loud(self):\n        return self.name.upper()');
  assert.equal(loud.body, '        return self.name.upper()');
  const unicode = await extract('sample.py', 'größe');
  assert.equal(unicode.full, 'def größe(ünï):\n    return ünï');
  const classes = (await listDefinitions(fixture('sample.py'), 'python')).definitions.filter((d) => d.kind === 'class');
  assert.deepEqual(
    classes.map((d) => [d.qualifiedName, d.startLine, d.endLine]),
    [['Greeter', 15, 29]],
  );
});

test('JavaScript: exports, arrows, function expressions, class fields, object members', async () => {
  assert.deepEqual(await functionsOf('sample.js'), [
    'function exported 3-5',
    'function plain 7-10',
    'function plain.nested 8-8',
    'function arrow 12-12',
    'function expr 14-16',
    'function default 18-20',
    'function exportedArrow 22-24',
    'constructor Counter.constructor 29-31',
    'method Counter.increment 33-35',
    'method Counter.create 37-39',
    'method Counter.value 41-43',
    'method handlers.onOpen 47-49',
    'method handlers.onClose 50-50',
    'function module.exports.legacy 53-55',
    'function generate 57-59',
  ]);
  const exported = await extract('sample.js', 'exportedArrow');
  assert.equal(exported.full, 'export const exportedArrow = async (y) => {\n  await fs.promises.readFile(y);\n};');
  assert.equal(exported.body, '{\n  await fs.promises.readFile(y);\n}');
  const arrow = await extract('sample.js', 'arrow');
  assert.deepEqual([arrow.full, arrow.body], ['const arrow = (x) => x * 2;', 'x * 2']);
  const field = await extract('sample.js', 'Counter.increment');
  assert.equal(field.full, '  increment = () => {\n    this.count += 1;\n  };');
});

test('TypeScript: overloads folded, generics, abstract members, decorators, namespaces', async () => {
  assert.deepEqual(await functionsOf('sample.mts'), [
    'method Shape.area 2-2',
    'function overloaded 5-9',
    'function identity 11-13',
    'constructor Base.constructor 16-16',
    'method Base.area 18-18',
    'method Base.describe 20-23',
    'method Base.helper 25-25',
    'function typedArrow 28-28',
    'method Square.area 31-33',
    'function Geometry.distance 37-39',
    'function logged 42-44',
  ]);
  const overloaded = await extract('sample.mts', 'overloaded');
  assert.equal(
    overloaded.full,
    'export function overloaded(x: string): string;\nexport function overloaded(x: number): number;\n' +
      'export function overloaded(x: string | number): string | number {\n  return x;\n}',
  );
  assert.equal(overloaded.body, '{\n  return x;\n}');
  const describe = await extract('sample.mts', 'describe');
  assert.equal(describe.full, '  @logged\n  describe(): string {\n    return `Base(${String(this.item)})`;\n  }');
  const abstract = await extract('sample.mts', 'Base.area');
  assert.deepEqual([abstract.full, abstract.body], ['  abstract area(): number;', null]);
  const identity = await extract('sample.mts', 'identity');
  assert.equal(identity.full, 'function identity<T>(value: T): T {\n  return value;\n}');
  const kinds = (await listDefinitions(fixture('sample.mts'), 'typescript')).definitions
    .filter((d) => d.kind !== 'function' && d.kind !== 'method' && d.kind !== 'constructor')
    .map((d) => `${d.kind} ${d.qualifiedName}`);
  assert.deepEqual(kinds, ['interface Shape', 'class Base', 'class Square', 'module Geometry']);
});

test('TSX: components, nested arrows, class methods', async () => {
  assert.deepEqual(await functionsOf('sample.tsx'), [
    'function Hello 3-5',
    'function Button 7-10',
    'function Button.onClick 8-8',
    'method Panel.render 13-15',
  ]);
});

test('Go: receivers (pointer, value, generic), generics, doc comments', async () => {
  assert.deepEqual(await functionsOf('sample.go'), [
    'function Plain 5-8',
    'method Server.Start 14-17',
    'method Server.Name 19-21',
    'function Map 23-29',
    'method List.Push 35-37',
    'method Runner.Run 40-40',
    'function Größe 43-46',
    'function Größe.helper 44-44',
  ]);
  const start = await extract('sample.go', 'Start');
  assert.equal(start.full, 'func (s *Server) Start() error {\n\tfmt.Println("start", s.name)\n\treturn nil\n}');
  assert.equal(start.body, '{\n\tfmt.Println("start", s.name)\n\treturn nil\n}');
  const plain = await extract('sample.go', 'Plain');
  assert.equal(plain.full, '// Plain adds two numbers.\nfunc Plain(a, b int) int {\n\treturn a + b\n}');
  assert.equal((await extract('sample.go', 'List.Push')).startLine, 35);
});

test('Rust: impl and trait blocks, attributes and doc comments, nested fns, modules', async () => {
  assert.deepEqual(await functionsOf('sample.rs'), [
    'function plain 3-7',
    'method Point::new 15-18',
    'method Point::x 20-22',
    'method Shape::area 26-26',
    'method Shape::describe 28-30',
    'method Point::fmt 34-36',
    'function outer 39-44',
    'function outer::inner 40-42',
    'function geometry::distance 47-49',
  ]);
  const plain = await extract('sample.rs', 'plain');
  assert.equal(plain.full, '/// Adds two numbers.\n#[inline]\npub fn plain(a: i32, b: i32) -> i32 {\n    a + b\n}');
  assert.equal(plain.body, '{\n    a + b\n}');
  const made = await extract('sample.rs', 'Point::new');
  assert.equal(
    made.full,
    '    /// Makes a point.\n    pub fn new(x: T, y: T) -> Self {\n        Point { x, y }\n    }',
  );
  // `.` and `::` are interchangeable in a requested name.
  assert.equal((await extract('sample.rs', 'Point.fmt')).qualifiedName, 'Point::fmt');
});

test('Java: constructors, annotations, overloads, nested types, unicode', async () => {
  assert.deepEqual(await functionsOf('Sample.java'), [
    'constructor Sample.Sample 9-11',
    'method Sample.toString 13-16',
    'method Sample.wrap 18-20',
    'method Sample.size 22-24',
    'method Sample.size 26-28',
    'method Sample.Visitor.visit 31-31',
    'method Sample.Color.next 37-39',
    'method Sample.größe 42-45',
    'function Sample.größe.r 43-43',
  ]);
  const toString = await extract('Sample.java', 'toString');
  assert.equal(
    toString.full,
    '    @Override\n    public String toString() {\n        return "Sample(" + value + ")";\n    }',
  );
  await assert.rejects(extract('Sample.java', 'size'), (error: unknown) => {
    assert.ok(error instanceof AmbiguousFunctionError);
    assert.deepEqual(error.candidates, ['Sample.size (lines 22-24)', 'Sample.size (lines 26-28)']);
    return true;
  });
  const second = await extract('Sample.java', 'size:26');
  assert.equal(second.body, '{\n        return s.length();\n    }');
});

test('Ruby, C, C++, C#, PHP', async () => {
  assert.deepEqual(await functionsOf('sample.rb'), [
    'method Tools.Greeter.initialize 3-5',
    'method Tools.Greeter.greet 7-9',
    'method Tools.Greeter.create 11-13',
    'function top_level 17-19',
  ]);
  assert.deepEqual(await functionsOf('sample.c'), [
    'function add 3-5',
    'function pointer_returning 7-9',
    'function main 13-16',
  ]);
  assert.deepEqual(await functionsOf('sample.cpp'), [
    'method geo::Shape::Shape 7-7',
    'method geo::Shape::~Shape 8-8',
    'method geo::Shape::area 9-9',
    'function geo::Shape_helper 12-14',
    'function maximum 18-21',
    'method geo::Shape::perimeter 23-25',
  ]);
  assert.equal(
    (await extract('sample.cpp', 'maximum')).full,
    'template <typename T>\nT maximum(T a, T b) {\n    return a > b ? a : b;\n}',
  );
  assert.deepEqual(await functionsOf('Sample.cs'), [
    'constructor Demo.Account.Account 7-10',
    'method Demo.Account.Deposit 14-18',
    'method Demo.Account.Doubled 20-20',
    'method Demo.IStore.Save 25-25',
  ]);
  assert.equal((await extract('Sample.cs', 'Doubled')).body, '=> Balance * 2');
  assert.deepEqual(await functionsOf('sample.php'), [
    'function top_level 3-5',
    'method Cart::__construct 9-9',
    'method Cart::total 11-15',
    'method Cart::empty 17-20',
    'function closure 23-25',
  ]);
  assert.equal(
    (await extract('sample.php', 'total')).full,
    '    #[Pure]\n    public function total(): int\n    {\n        return array_sum($this->items);\n    }',
  );
});

test('CRLF line endings are kept in the extracted text and lines still count', async () => {
  assert.deepEqual(await functionsOf('crlf.py'), ['function first 1-2', 'method K.m 6-7']);
  const m = await extract('crlf.py', 'K.m');
  assert.equal(m.full, '    def m(self):\r\n        return 2');
  assert.equal(m.body, '        return 2');
});

test('an empty file has no definitions and no errors', async () => {
  assert.deepEqual(await functionsOf('empty.py'), []);
  await assert.rejects(
    extract('empty.py', 'anything'),
    /func: no function named 'anything' \(the file defines no functions\)/,
  );
});

test('syntax errors: counted and located; the parts that parse are still answered', async () => {
  const py = await listFunctions(fixture('broken.py'), 'python');
  assert.deepEqual(py.syntaxErrors, { count: 1, firstLines: [5] });
  assert.deepEqual(
    py.definitions.map((d) => d.name),
    ['good', 'bad', 'also_good'],
  );
  const ts = await listFunctions(fixture('broken.cts'), 'typescript');
  assert.ok(ts.syntaxErrors.count >= 1);
  assert.equal(ts.syntaxErrors.firstLines[0], 5);
  assert.deepEqual(
    ts.definitions.map((d) => d.name),
    ['ok', 'fine'],
  );
  const fine = await extractFunction(fixture('broken.cts'), 'typescript', 'fine');
  assert.equal(fine.full, 'function fine(): number {\n  return 3;\n}');
  assert.deepEqual(fine.syntaxErrors, ts.syntaxErrors);
  assert.deepEqual(await countSyntaxErrors(fixture('sample.rs'), 'rust'), { count: 0, firstLines: [] });
  assert.deepEqual(await countSyntaxErrors('fn broken( {', 'rust').then((s) => s.count > 0), true);
});

test('lookup errors name what exists, capped', async () => {
  await assert.rejects(extract('sample.go', 'Stop'), (error: unknown) => {
    assert.ok(error instanceof FunctionNotFoundError && error instanceof InputError);
    assert.equal(
      error.message,
      "func: no function named 'Stop'; the file defines: Plain, " +
        'Server.Start, Server.Name, Map, List.Push, Runner.Run, Größe, ' +
        'Größe.helper',
    );
    return true;
  });
  const many = Array.from({ length: 60 }, (_, i) => `def f${i}():\n    pass\n`).join('');
  await assert.rejects(extractFunction(many, 'python', 'g'), /f49 … and 10 more$/);
  await assert.rejects(extractFunction(many, 'python', '  '), /func: '' is not a function name/);
  // Separators alone once matched every function as a "suffix".
  for (const func of ['.', '::', '.:3'])
    await assert.rejects(extractFunction(many, 'python', func), /is not a function name/);
  await assert.rejects(
    listDefinitions('x', 'cobol'),
    /language: 'cobol' is not supported; supported: python, javascript/,
  );
  // Qualified suffixes: `Greeter.fetch.helper` is found as `fetch.helper`, not as `Greeter.helper`.
  assert.equal((await extract('sample.py', 'fetch.helper')).qualifiedName, 'Greeter.fetch.helper');
  await assert.rejects(extract('sample.py', 'Greeter.helper'), FunctionNotFoundError);
});

test('offsets slice the source exactly, with non-ASCII text before them', async () => {
  const source = fixture('sample.py');
  const { definitions } = await listDefinitions(source, 'python');
  const square = definitions.find((d) => d.name === 'square');
  assert.ok(square);
  assert.equal(source.slice(square.startOffset, square.endOffset), 'square = lambda n: n * n');
});
