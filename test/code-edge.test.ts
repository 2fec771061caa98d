/**
 * src/code on the code people really write, beyond the basic fixture matrix: decorators with
 * arguments, property setters, nested classes, string and computed keys, nested object literals,
 * `declare`, class-field semicolons, doc comments, function literals and closures bound to names,
 * methods inside enum constants, C++ operators, CRLF with characters outside the BMP.
 * The fixtures (test/fixtures/code/edge.*, Edge.java, crlf-unicode.py) also run through the MCP
 * tools in code-tools.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listFunctions } from '../src/code/index.js';
import { MAX_NESTING, MAX_TREE_DEPTH } from '../src/code/definitions.js';
import { extract, functionsOf } from './helpers/code-fixtures.js';

async function texts(name: string, func: string): Promise<[string, string | null]> {
  const extracted = await extract(name, func);
  return [extracted.full, extracted.body];
}

test('Python: decorators with arguments, property setters, nested classes, async', async () => {
  assert.deepEqual(await functionsOf('edge.py'), [
    'function retry 3-9',
    'function retry.deco 4-8',
    'function retry.deco.wrapper 5-7',
    'method Outer.Inner.m 16-17',
    'method Outer.value 19-21',
    'method Outer.value 23-25',
    'method Outer.fetch 27-29',
    'method Outer.s 31-32',
    'method Outer.square 34-34',
    'function handler 37-37',
    'function main 40-43',
    'function main.inner 41-42',
    'function ünïcode_名前 45-46',
  ]);
  assert.deepEqual(await texts('edge.py', 'Outer.fetch'), [
    '    @retry(times=5)\n    async def fetch(self, url: str) -> bytes:\n        return b""',
    '        return b""',
  ]);
  assert.deepEqual(await texts('edge.py', 'value:23'), [
    '    @value.setter\n    def value(self, v):\n        self._v = v',
    '        self._v = v',
  ]);
  await assert.rejects(
    texts('edge.py', 'value:22'),
    /func: no 'value' starts at line 22; it starts at line\(s\) 19, 23/,
  );
});

test('TypeScript: declare, class-field semicolons, nested object literals, overloads in classes', async () => {
  assert.deepEqual(await functionsOf('edge.mts'), [
    'function overloaded 1-5',
    'method Shape.area 8-8',
    'constructor Shape.constructor 9-9',
    'method Shape.describe 10-10',
    'method Shape.handler 11-11',
    'method Shape.create 12-12',
    'method Shape.size 13-13',
    'method Shape.size 14-14',
    'method Shape.decorated 15-16',
    'method Shape.gen 17-17',
    'function default 20-22',
    'function Util.helper 25-25',
    'function Util.Deep.arrow 27-27',
    'method api.get 32-32',
    'method api.put 33-33',
    'method api.nested.del 34-34',
    'function generic 37-37',
    'function ambient 39-39',
    'method Greeter.greet 41-41',
    'method Impl.greet 44-45',
  ]);
  assert.deepEqual(await texts('edge.mts', 'ambient'), ['declare function ambient(x: number): void;', null]);
  assert.deepEqual(await texts('edge.mts', 'describe'), [
    '  describe = (): string => `${this.name}`;',
    '`${this.name}`',
  ]);
  assert.deepEqual(await texts('edge.mts', 'Impl.greet'), [
    '  greet(name: string): string;\n  greet(name: any): any { return name; }',
    '{ return name; }',
  ]);
  assert.deepEqual(await texts('edge.mts', 'Deep.arrow'), ['    export const arrow = <T,>(x: T) => x;', 'x']);
});

test('JavaScript: string and computed keys, nested objects, assignments keep their semicolon', async () => {
  assert.deepEqual(await functionsOf('edge.js'), [
    'function module.exports.handler 2-4',
    'function exports.other 5-5',
    'method Widget.#secret 8-8',
    'method Widget.onClick 10-10',
    'constructor Widget.constructor 11-11',
    'method Widget.#priv 12-12',
    'method Widget[Symbol.iterator] 13-13',
    'method routes.GET / 17-17',
    'method routes[computed] 18-18',
    'method routes.inner.deep 20-20',
    'method Page.render 25-25',
    'function gen 28-28',
    'function a 29-29',
    'function b 29-29',
    'function Widget.prototype.extra 30-30',
  ]);
  assert.deepEqual(await texts('edge.js', 'module.exports.handler'), [
    'module.exports.handler = async (event) => {\n  return event;\n};',
    '{\n  return event;\n}',
  ]);
  assert.deepEqual(await texts('edge.js', 'GET /'), ["  'GET /': function home() {}", '{}']);
});

test('Go: generic receivers by value and pointer, interface methods, function literals', async () => {
  assert.deepEqual(await functionsOf('edge.go'), [
    'method Stack.Push 10-13',
    'method Stack.Len 15-15',
    'method Stack.Static 17-17',
    'function Map 19-25',
    'method Server.Start 31-36',
    'function Server.Start.handler 32-32',
    'method Reader.Read 39-39',
    'method Pair.Key 42-42',
  ]);
  assert.deepEqual(await texts('edge.go', 'Push'), [
    '// Push adds.\nfunc (s *Stack[T]) Push(v T) {\n\ts.items = append(s.items, v)\n}',
    '{\n\ts.items = append(s.items, v)\n}',
  ]);
  assert.deepEqual(await texts('edge.go', 'handler'), [
    '\thandler := func(x int) error { return nil }',
    '{ return nil }',
  ]);
});

test('Rust: generic impls, trait default methods, closures, nested modules', async () => {
  assert.deepEqual(await functionsOf('edge.rs'), [
    'method Point::new 8-10',
    'method Point::fetch 12-14',
    'method Point::fmt 18-20',
    'method Shape::area 24-24',
    'method Shape::describe 25-28',
    'function inner::helper 36-36',
    'function inner::tests::it_works 39-40',
    'method Point::next 46-46',
    'function main 49-53',
    'function main::add 50-50',
    'function main::nested 51-51',
    'function main::callback 52-52',
  ]);
  assert.deepEqual(await texts('edge.rs', 'new'), [
    '    /// Makes one.\n    #[inline]\n    pub const fn new(x: T, y: T) -> Self { Self { x, y } }',
    '{ Self { x, y } }',
  ]);
  assert.deepEqual(await texts('edge.rs', 'add'), ['    let add = |a: i32, b: i32| a + b;', 'a + b']);
});

test('Java: Javadoc, annotations with arguments, records, enum constant bodies, lambdas', async () => {
  assert.deepEqual(await functionsOf('Edge.java'), [
    'constructor Outer.Outer 9-11',
    'method Outer.map 13-17',
    'method Outer.Inner.run 20-22',
    'function Outer.Inner.run.r 21-21',
    'constructor Outer.Nested.Nested 26-26',
    'constructor Outer.Pair.Pair 30-32',
    'method Outer.Pair.twin 33-33',
    'method Outer.Op.ADD.apply 38-38',
    'method Outer.Op.SUB.apply 41-41',
    'method Outer.Op.apply 43-43',
    'method Outer.Visitor.visit 47-47',
    'method Outer.Visitor.done 48-48',
    'method Outer.anon 51-55',
    'method Outer.anon.Object.toString 53-53',
  ]);
  assert.deepEqual(await texts('Edge.java', 'Outer.Outer'), [
    '    /** Javadoc. */\n    @Inject\n    public Outer(int x) { this.x = x; }',
    '{ this.x = x; }',
  ]);
  assert.deepEqual(await texts('Edge.java', 'ADD.apply'), [
    '            @Override int apply(int a, int b) { return a + b; }',
    '{ return a + b; }',
  ]);
});

test('C++: operators keep their symbol', async () => {
  assert.deepEqual(await functionsOf('edge.cpp'), [
    'method net::Buffer::Buffer 6-6',
    'method net::Buffer::Buffer 7-7',
    'method net::Buffer::~Buffer 8-8',
    'method net::Buffer::at 9-9',
    'method net::Buffer::operator< 10-10',
    'method net::Buffer::count 16-17',
    'function net::free_fn 19-19',
    'function make 22-22',
  ]);
});

test('CRLF with characters outside the BMP: offsets and lines stay exact', async () => {
  assert.deepEqual(await functionsOf('crlf-unicode.py'), ['method A.m 3-5', 'function f 7-8']);
  assert.deepEqual(await texts('crlf-unicode.py', 'm'), [
    '    @dec(x="😀")\r\n    def m(self):\r\n        return "😀😀"',
    '        return "😀😀"',
  ]);
});

test('pathological nesting is bounded: deeper definitions are left out, nothing hangs', async () => {
  const nested = `${'function f() {'.repeat(MAX_NESTING + 20)}${'}'.repeat(MAX_NESTING + 20)}`;
  const deep = await listFunctions(nested, 'javascript');
  assert.equal(deep.definitions.length, MAX_NESTING);
  const bracketed = `x = ${'['.repeat(MAX_TREE_DEPTH)}function g() {}${']'.repeat(MAX_TREE_DEPTH)};\nfunction h() {}\n`;
  assert.deepEqual(
    (await listFunctions(bracketed, 'javascript')).definitions.map((d) => d.name),
    ['h'],
  );
});

for (const [shape, entries, open, separator, close] of [
  [
    'members of an object',
    Array.from({ length: 20_000 }, (_, i) => `f${i}: (x) => x + ${i}`),
    'const api = {',
    ',',
    '};',
  ],
  ['functions', Array.from({ length: 10_000 }, (_, i) => `function f${i}(x) { return x + ${i}; }`), '', '', ''],
] as const) {
  test(
    `a minified file (every definition on one line: ${shape}) lists ` + `what the same code on many lines lists`,
    async () => {
      // That it also costs about the same time is held by bench/checks/code.ts (code.minified-one-line).
      const oneLine = `${open}${entries.join(`${separator} `)}${close}\n`;
      const manyLines = `${open}\n${entries.join(`${separator}\n`)}\n${close}\n`;
      const names = async (source: string): Promise<string[]> =>
        (await listFunctions(source, 'javascript')).definitions.map((d) => d.qualifiedName);
      const listed = await names(oneLine);
      assert.equal(listed.length, entries.length);
      assert.deepEqual(listed, await names(manyLines));
    },
  );
}
