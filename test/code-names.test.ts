/**
 * How definitions are named and kinded where the name is not a plain identifier: C++ methods
 * defined outside their class (`int S::m() {…}`), and JavaScript/TypeScript computed member keys
 * (`{ [k]() {} }`, `o["k"] = function () {}`). Every listed name must come back through
 * extractFunction, qualified or bare.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractFunction, listDefinitions, listFunctions } from '../src/code/index.js';

async function described(source: string, language: string): Promise<string[]> {
  const { definitions } = await listDefinitions(source, language);
  return definitions.map((definition) => `${definition.kind} ${definition.qualifiedName}`);
}

/** Every function listed is found again by its qualified name and by its bare name when that is unique. */
async function assertRoundTrips(source: string, language: string): Promise<void> {
  const { definitions } = await listFunctions(source, language);
  assert.ok(definitions.length > 0);
  for (const definition of definitions) {
    const byQualified = await extractFunction(source, language, `${definition.qualifiedName}:${definition.startLine}`);
    assert.equal(byQualified.qualifiedName, definition.qualifiedName);
    assert.equal(byQualified.startLine, definition.startLine);
    if (definitions.filter((other) => other.name === definition.name).length === 1) {
      assert.equal(
        (await extractFunction(source, language, definition.name)).qualifiedName,
        definition.qualifiedName,
        definition.name,
      );
    }
  }
}

const CPP_OUTSIDE = `namespace net {
namespace detail { int helper(); }
struct S {
  S();
  int m();
  int n() { return 1; }
};
int detail::helper() { return 0; }
}

net::S::S() {}
int net::S::m() { return 2; }
int net::detail::helper2() { return 3; }
template <typename T> int Box<T>::get() { return 4; }
int ::global() { return 5; }
int plain() { return 6; }
`;

test(
  'C++: a function defined outside its class (`int S::m()`) is a ' + 'method of S, qualified as the ones inside',
  async () => {
    assert.deepEqual(await described(CPP_OUTSIDE, 'cpp'), [
      'module net',
      'module net::detail',
      'struct net::S',
      'method net::S::n',
      // `detail` is a namespace this file defines: a function of it, not a method.
      'function net::detail::helper',
      'method net::S::S',
      'method net::S::m',
      'function net::detail::helper2',
      // A type defined elsewhere (a header): a method of it, its template arguments dropped.
      'method Box::get',
      'function global',
      'function plain',
    ]);
    await assertRoundTrips(CPP_OUTSIDE, 'cpp');
    const m = await extractFunction(CPP_OUTSIDE, 'cpp', 'S::m');
    assert.equal(m.kind, 'method');
    assert.equal(m.full, 'int net::S::m() { return 2; }');
  },
);

const COMPUTED = `const o = {};
o["k"] = function () {};
o['dash-key'] = () => 1;
o[dynamic] = () => 2;
module.exports["handler"] = async () => 3;
const x = { ["k3"]() {}, [sym]: function () {}, [\`t\`]() {}, "k4"() {} };
class C {
  [Symbol.iterator]() {
    function inner() {}
  }
  ['m']() {}
  static ["s"] = () => 1;
}
`;

for (const language of ['javascript', 'typescript']) {
  test(
    `${language}: computed member keys are named as written after ` +
      `their object (x[sym]); string keys as plain names`,
    async () => {
      assert.deepEqual(await described(COMPUTED, language), [
        'function o.k',
        'function o.dash-key',
        'function module.exports.handler',
        'method x.k3',
        'method x[sym]',
        'method x[`t`]',
        'method x.k4',
        'class C',
        'method C[Symbol.iterator]',
        'function C[Symbol.iterator].inner',
        'method C.m',
        'method C.s',
      ]);
      await assertRoundTrips(COMPUTED, language);
      // The key alone, or with the older `.` before it, still finds it.
      for (const func of ['[Symbol.iterator]', 'C[Symbol.iterator]', 'C.[Symbol.iterator]']) {
        assert.equal((await extractFunction(COMPUTED, language, func)).qualifiedName, 'C[Symbol.iterator]', func);
      }
      assert.equal((await extractFunction(COMPUTED, language, 'o.k')).full, 'o["k"] = function () {};');
      assert.equal((await extractFunction(COMPUTED, language, 'inner')).qualifiedName, 'C[Symbol.iterator].inner');
    },
  );
}

test('C++: operator[] keeps its brackets as part of its name', async () => {
  const source = 'struct V { int operator[](int i) { return i; } };\nint V::operator[](long i) { return 0; }\n';
  assert.deepEqual(await described(source, 'cpp'), ['struct V', 'method V::operator[]', 'method V::operator[]']);
  assert.equal((await extractFunction(source, 'cpp', 'operator[]:2')).full, 'int V::operator[](long i) { return 0; }');
});

test('C++: a return type or macro that error recovery read into a qualified name is not part of the name', async () => {
  // `DECL T f(…)`: tree-sitter reads `T f` as a qualified name with a MISSING `::`; a macro line
  // before `typename C::size_type\nC::size()` makes the return type part of the name.
  const source =
    '__DEVICE_DECL__ __half hsin(const __half a) { return a; }\n' +
    'TEMPLATE_DECL\ntypename C_DEC::size_type\nC_DEC::size() const { return 0; }\n' +
    'TEMPLATE_DECL\nstd::pair<typename C_DEC::iterator, bool>\nC_DEC::insert(int v) { return {}; }\n' +
    'int A :: B :: f() { return 1; }\n' +
    'ns::Out<int, char>::Inner::g() {}\n';
  assert.deepEqual(await described(source, 'cpp'), [
    'function hsin',
    'method C_DEC::size',
    'method C_DEC::insert',
    'method A::B::f',
    'method ns::Out::Inner::g',
  ]);
  await assertRoundTrips(source, 'cpp');
  assert.equal(
    (await extractFunction(source, 'cpp', 'hsin')).full,
    '__DEVICE_DECL__ __half hsin(const __half a) { return a; }',
  );
});

test(
  'C++: conversion operators are listed, inside their class and ' + 'defined outside it, named by their type',
  async () => {
    const source =
      'struct S {\n  explicit operator bool() const { return true; }\n  ' +
      'operator int();\n  operator std::vector<int> () const { return ' +
      '{}; }\n};\n' +
      'S::operator int() { return 1; }\nns::T::operator  unsigned   ' +
      'long() const { return 2; }\nS::operator std::string() { return ' +
      '""; }\n';
    assert.deepEqual(await described(source, 'cpp'), [
      'struct S',
      'method S::operator bool',
      'method S::operator std::vector<int>',
      'method S::operator int',
      'method ns::T::operator unsigned long',
      'method S::operator std::string',
    ]);
    await assertRoundTrips(source, 'cpp');
    assert.equal((await extractFunction(source, 'cpp', 'S::operator int')).full, 'S::operator int() { return 1; }');
    // Error recovery reads `MACRO namespace NAME {…}` as a function definition whose declarator is
    // the qualified name `namespace NAME`: not a conversion operator, so not listed.
    const macroNamespace = 'namespace n {\nINLINE_IF namespace VERSION_NS\n{\nint f() { return 1; }\n}\n}\n';
    assert.deepEqual(await described(macroNamespace, 'cpp'), ['module n', 'function n::f']);
  },
);

test(
  'JavaScript/TypeScript: a computed key that is a comma sequence ' +
    'is named by its last operand, the key it evaluates to',
  async () => {
    // What TypeScript emits for a class with private fields and an async iterator.
    const source =
      'class Stream {\n  [(_Stream_client = new WeakMap(), _Stream_read ' +
      '= function _Stream_read() {\n    return 1;\n  }, ' +
      'Symbol.asyncIterator)]() {\n    return 2;\n  }\n  [(_k = 1, ' +
      '"key")]() {}\n}\n';
    for (const language of ['javascript', 'typescript']) {
      assert.deepEqual(await described(source, language), [
        'class Stream',
        'method Stream[Symbol.asyncIterator]',
        'function Stream[Symbol.asyncIterator]._Stream_read',
        'method Stream.key',
      ]);
      await assertRoundTrips(source, language);
      assert.equal((await extractFunction(source, language, '[Symbol.asyncIterator]')).startLine, 2);
    }
  },
);

test(
  'TypeScript: a member assigned on a cast, a non-null or ' + 'parenthesized object is qualified by the object itself',
  async () => {
    for (const language of ['typescript', 'tsx']) {
      const source =
        'function refine(payload: unknown) {\n  (payload as Ctx).addIssue = (issue) => {};\n}\n' +
        '(config.checks![0]!.def as { when?: unknown }).when = () => true;\n' +
        '(api satisfies Api).get = function () {};\n' +
        '((o)).g = () => 2;\n' +
        'store!.reset = () => {};\n';
      assert.deepEqual(await described(source, language), [
        'function refine',
        'function refine.payload.addIssue',
        'function config.checks.when',
        'function api.get',
        'function o.g',
        'function store.reset',
      ]);
      await assertRoundTrips(source, language);
    }
    // JavaScript has no casts; its parentheses are unwrapped the same way.
    assert.deepEqual(await described('((o)).g = () => 2;\n', 'javascript'), ['function o.g']);
  },
);

test(
  'C++: an anonymous enum with an underlying type (read with a ' + 'zero-width name) is not listed with an empty name',
  async () => {
    const source =
      'struct S {\n  enum : unsigned { Size = 8 };\n  enum Named : int ' +
      '{ A };\n  int f() { return Size; }\n};\nenum : int { Top };\n';
    const { definitions } = await listDefinitions(source, 'cpp');
    assert.ok(
      definitions.every((definition) => definition.name !== '' && !definition.qualifiedName.endsWith('::')),
      JSON.stringify(definitions.map((d) => d.qualifiedName)),
    );
    assert.deepEqual(await described(source, 'cpp'), ['struct S', 'enum S::Named', 'method S::f']);
  },
);

test("Lua: a method is extracted by its name as written, 'M:method', as well as 'M.method'", async () => {
  const source =
    'local M = {}\nfunction M:method(x)\n  return x\nend\nfunction M.other(x)\n  return x\nend\nreturn M\n';
  for (const func of ['M:method', 'M.method', 'method', 'M:method:2'])
    assert.equal((await extractFunction(source, 'lua', func)).qualifiedName, 'M.method', func);
  assert.equal((await extractFunction(source, 'lua', 'M:other')).qualifiedName, 'M.other');
});

test('Kotlin: an expression body and an empty block are bodies; an interface function has none', async () => {
  const source = [
    'class Greeter {',
    '  fun greet() = "hi"',
    '  suspend fun later() { }',
    '}',
    'interface Named {',
    '  fun name(suffix: String = "!"): String',
    '}',
    '',
  ].join('\n');
  assert.equal((await extractFunction(source, 'kotlin', 'greet')).body, '= "hi"');
  assert.equal((await extractFunction(source, 'kotlin', 'later')).body, '{ }');
  assert.equal((await extractFunction(source, 'kotlin', 'Named.name')).body, null);
});

test('Kotlin: a lambda or anonymous function bound to a property is listed and extracted as a function', async () => {
  const source = [
    'class Rules {',
    '  val inc = { y: Int -> y + 1 }',
    '  val twice = fun(x: Int): Int { return x * 2 }',
    '  val limit = 3',
    '}',
    'val square: (Int) -> Int = { it * it }',
    '',
  ].join('\n');
  const names = (await listFunctions(source, 'kotlin')).definitions.map((definition) => definition.qualifiedName);
  for (const name of ['Rules.inc', 'Rules.twice', 'square']) assert.ok(names.includes(name), `${name} in ${names}`);
  assert.ok(!names.includes('Rules.limit'), 'a property bound to a value is no function');
  assert.equal((await extractFunction(source, 'kotlin', 'Rules.inc')).body, '{ y: Int -> y + 1 }');
  assert.equal((await extractFunction(source, 'kotlin', 'twice')).body, '{ return x * 2 }');
  assert.equal((await extractFunction(source, 'kotlin', 'square')).body, '{ it * it }');
});
