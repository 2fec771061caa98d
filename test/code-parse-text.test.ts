/**
 * The text tree-sitter is given (src/code/parse-text.ts): the source itself, or a rewrite with the
 * same length and every token at the same offset, with as many line breaks before it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractFunction, listDefinitions } from '../src/code/index.js';
import { textToParse } from '../src/code/parse-text.js';

/** Offsets of the non-blank characters of `text`, each with the number of line breaks before it. */
function tokens(text: string): string[] {
  const found: string[] = [];
  let rows = 0;
  for (let at = 0; at < text.length; at++) {
    if (text[at] === '\n') rows++;
    else if (!/\s/.test(text[at]!)) found.push(`${at}:${text[at]}:${rows}`);
  }
  return found;
}

test(
  '`export` and `default` on separate lines: the line breaks move ' +
    'after `default`, every other token keeps its row',
  () => {
    const source = 'a();\nexport\n  default function f() {}\n';
    const text = textToParse(source, 'javascript');
    assert.equal(text, 'a();\nexport   default\nfunction f() {}\n');
    assert.equal(text.length, source.length);
    // Only `default`'s own characters change row (to `export`'s); everything else is where it was.
    const keyword = source.indexOf('default');
    const outsideKeyword = (token: string) =>
      Number(token.split(':')[0]) < keyword || Number(token.split(':')[0]) >= keyword + 7;
    assert.deepEqual(tokens(text).filter(outsideKeyword), tokens(source).filter(outsideKeyword));
    assert.deepEqual(
      tokens(text)
        .filter((token) => !outsideKeyword(token))
        .map((token) => token.split(':')[2]),
      Array(7).fill('1'),
    );
    assert.equal(textToParse('export\r\ndefault class {}', 'typescript'), 'export  default\nclass {}');
  },
);

test('`export default abstract class` of an anonymous class: `abstract` is blanked, in TypeScript only', () => {
  for (const [source, expected] of [
    ['export default abstract class {}', 'export default          class {}'],
    ['export default abstract class<T> {}', 'export default          class<T> {}'],
    ['export  default\nabstract  class extends B {}', 'export  default\n          class extends B {}'],
    ['export default abstract class implements I {}', 'export default          class implements I {}'],
  ] as const) {
    assert.equal(textToParse(source, 'typescript'), expected);
    assert.equal(textToParse(source, 'tsx'), expected);
    assert.equal(textToParse(source, 'javascript'), source);
  }
});

test('anything else is parsed as written', () => {
  for (const source of [
    'export default abstract class A {}',
    'export default abstract class Abstract {}',
    'myexport default abstract class {}',
    'export abstract class {}',
    'const abstract = 1; abstract\nclass {}',
    'x.export\ndefault function f() {}',
    'y = 1; export\ndefault function f() {}',
    'export\ndefault\nfunction f() {}',
    'export\n\ndefault function f() {}',
    'export\ndefaults function f() {}',
    'export\ndefault',
    '',
  ]) {
    assert.equal(textToParse(source, 'typescript'), source, JSON.stringify(source));
  }
  const python = 'export\ndefault function f() {}';
  assert.equal(textToParse(python, 'python'), python);
});

test(
  'C++: export macros between `class` and the name are blanked for ' + 'the parser, and the class is listed as written',
  async () => {
    assert.equal(
      textToParse('class V8_EXPORT Isolate : public Base {};', 'cpp'),
      'class           Isolate : public Base {};',
    );
    assert.equal(
      textToParse('struct API\n  DEPRECATED Foo final {};', 'cpp'),
      'struct    \n             Foo final {};',
    );
    for (const source of [
      'class Foo {};',
      'class FOO {};',
      'class A b;',
      'class A::B {};',
      'class API a::B {};',
      'struct S s = {};',
      'int CLASS Foo {};',
    ]) {
      assert.equal(textToParse(source, 'cpp'), source, source);
    }
    assert.equal(textToParse('class V8_EXPORT Isolate {};', 'c'), 'class V8_EXPORT Isolate {};');

    const source =
      'namespace v8 {\nclass V8_EXPORT Isolate : public Base {\n public:\n  void Dispose() { x = 1; }\n};\n}\n';
    const list = await listDefinitions(source, 'cpp');
    assert.equal(list.syntaxErrors.count, 0);
    assert.deepEqual(
      list.definitions.map((definition) => `${definition.kind} ${definition.qualifiedName}`),
      ['module v8', 'class v8::Isolate', 'method v8::Isolate::Dispose'],
    );
    const klass = list.definitions[1]!;
    assert.equal(
      source.slice(klass.startOffset, klass.endOffset),
      'class V8_EXPORT Isolate : public Base {\n public:\n  void Dispose() { x = 1; }\n};',
    );
    assert.equal((await extractFunction(source, 'cpp', 'Isolate::Dispose')).full, '  void Dispose() { x = 1; }');
  },
);

test('thousands of rewrites in one file: every one made, offsets and rows kept', () => {
  // The time this takes (linear in the file) is held by bench/checks/code.ts (code.parse-text-linear).
  const shapes: [string, (i: number) => string][] = [
    ['typescript', (i) => `export\ndefault function f${i}() {}\nexport default abstract class { m${i}() {} }\n`],
    ['cpp', (i) => `class API_${i} C${i} : public B { void m() {} };\n`],
  ];
  for (const [language, shape] of shapes) {
    const one = shape(0);
    const rewrittenOne = textToParse(one, language);
    assert.notEqual(rewrittenOne, one, `${language}: the shape is rewritten`);
    const large = Array.from({ length: 20_000 }, (_, i) => shape(i)).join('');
    const rewritten = textToParse(large, language);
    assert.equal(rewritten.length, large.length);
    // Each copy is rewritten as the first one is: the same blanks at the same places in it.
    const lines = (text: string): string[] => text.split('\n');
    assert.equal(lines(rewritten).length, lines(large).length, `${language}: rows kept`);
    const blanked = (original: string, rewrite: string): string =>
      [...original].map((char, at) => (char === rewrite[at] ? '.' : '_')).join('');
    const runs = (marks: string): string => marks.replace(/(.)\1+/g, '$1');
    const pattern = blanked(one, rewrittenOne);
    let at = 0;
    for (let i = 0; i < 20_000; i += 1) {
      const copy = shape(i);
      assert.equal(runs(blanked(copy, rewritten.slice(at, at + copy.length))), runs(pattern), `${language}: copy ${i}`);
      at += copy.length;
    }
  }
});
