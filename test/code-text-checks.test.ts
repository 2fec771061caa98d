/**
 * The definitions pass answers some questions from the source text instead of asking tree-sitter
 * (src/code/definitions.ts: no `;` after a node, no comment marker before a block, a blank line
 * above a definition, a bracket before it where an `export`/`declare` wrapper would end). Each
 * shortcut must give exactly what asking tree-sitter gave: these cases sit on the edges of each
 * check (comments where a wrapper or an attached sibling could be, `;` after members, comments
 * between a header and its block, `/` that is not a comment), and the expected values are what
 * the pass gave before the shortcuts, when it asked tree-sitter every time (since corrected where
 * that was wrong: `export` on its own line is part of the definition after it, and an anonymous
 * default class is listed; test/code-exports). Names of plain identifiers are read from the text
 * too (src/code/definitions.ts plainWordAt).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listDefinitions } from '../src/code/index.js';

type Row = [kind: string, qualifiedName: string, startLine: number, endLine: number, full: string, body: string | null];

async function rows(source: string, language: string): Promise<Row[]> {
  const { definitions } = await listDefinitions(source, language);
  return definitions.map((d) => [
    d.kind,
    d.qualifiedName,
    d.startLine,
    d.endLine,
    source.slice(d.startOffset, d.endOffset),
    d.body ? source.slice(d.body.startOffset, d.body.endOffset) : null,
  ]);
}

const TS_CASES =
  'export /* why */ function a() {}\nexport // }\nfunction b() ' +
  '{}\ndeclare function c(): void;\n\n/** Overloaded. */\nfunction ' +
  'd(x: string): void;\nfunction d(x: number): void;\nfunction d(x: ' +
  'any) {}\n\nfunction e(x: string): void;\n\nfunction e(x: any) ' +
  '{}\nclass K {\n  f = () => 1;\n  /** doc */\n  @dec\n  g(): void ' +
  '{}\n\n  h() {}\n  abstract i(): void ;\n  j = function () {} // ' +
  'trailing\n  ;\n}\nconst m1 = 1, m2 = () => 2;\nfunction k(a = 1 ' +
  '/ 2) /* c */ {}\nfunction l() // c\n{}\nexport default function ' +
  '() {}\nexport const n = () => 3, o = 4;\nlet p = { q() {}, r: () ' +
  '=> 1 };\n/* block */ function s() {}\n\n// line\nfunction t() ' +
  '{}\nexport\nfunction w() {}\nexport declare function v(): ' +
  'void;\n@dec() export class X {}\nexport @dec() class Y ' +
  '{}\ndeclare namespace NS { function inner(): void; }\nexport ' +
  '{};\nexport default class { m() {} }\n';

const PY_CASES = 'def f():\n    # why\n    return 1\n\n@dec\ndef g(x=1/2):  # c\n    pass\n';

/** What TypeScript and TSX list (JavaScript parses the TypeScript-only lines differently). */
const TS_EXPECTED: Row[] = [
  ['function', 'a', 1, 1, 'export /* why */ function a() {}', '{}'],
  ['function', 'b', 2, 3, 'export // }\nfunction b() {}', '{}'],
  ['function', 'c', 4, 4, 'declare function c(): void;', null],
  [
    'function',
    'd',
    6,
    9,
    '/** Overloaded. */\nfunction d(x: string): void;\nfunction d(x: number): void;\nfunction d(x: any) {}',
    '{}',
  ],
  ['function', 'e', 11, 11, 'function e(x: string): void;', null],
  ['function', 'e', 13, 13, 'function e(x: any) {}', '{}'],
  [
    'class',
    'K',
    14,
    24,
    'class K {\n  f = () => 1;\n  /** doc */\n  @dec\n  g(): void {}\n\n ' +
      ' h() {}\n  abstract i(): void ;\n  j = function () {} // ' +
      'trailing\n  ;\n}',
    '{\n  f = () => 1;\n  /** doc */\n  @dec\n  g(): void {}\n\n  h() ' +
      '{}\n  abstract i(): void ;\n  j = function () {} // trailing\n  ' +
      ';\n}',
  ],
  ['method', 'K.f', 15, 15, '  f = () => 1;', '1'],
  ['method', 'K.g', 16, 18, '  /** doc */\n  @dec\n  g(): void {}', '{}'],
  ['method', 'K.h', 20, 20, '  h() {}', '{}'],
  ['method', 'K.i', 21, 21, '  abstract i(): void', null],
  ['method', 'K.j', 22, 22, '  j = function () {}', '{}'],
  ['function', 'm2', 25, 25, 'm2 = () => 2;', '2'],
  ['function', 'k', 26, 26, 'function k(a = 1 / 2) /* c */ {}', '/* c */ {}'],
  ['function', 'l', 27, 28, 'function l() // c\n{}', '// c\n{}'],
  ['function', 'default', 29, 29, 'export default function () {}', '{}'],
  ['function', 'n', 30, 30, 'n = () => 3', '3'],
  ['method', 'p.q', 31, 31, 'q() {}', '{}'],
  ['method', 'p.r', 31, 31, 'r: () => 1', '1'],
  ['function', 's', 32, 32, 'function s() {}', '{}'],
  ['function', 't', 35, 35, 'function t() {}', '{}'],
  ['function', 'w', 36, 37, 'export\nfunction w() {}', '{}'],
  ['function', 'v', 38, 38, 'export declare function v(): void;', null],
  ['class', 'X', 39, 39, '@dec() export class X {}', '{}'],
  ['class', 'Y', 40, 40, 'export @dec() class Y {}', '{}'],
  ['module', 'NS', 41, 41, 'declare namespace NS { function inner(): void; }', '{ function inner(): void; }'],
  ['function', 'NS.inner', 41, 41, 'function inner(): void;', null],
  ['class', 'default', 43, 43, 'export default class { m() {} }', '{ m() {} }'],
  ['method', 'default.m', 43, 43, 'm() {}', '{}'],
];

const JS_EXPECTED: Row[] = [
  ['function', 'a', 1, 1, 'export /* why */ function a() {}', '{}'],
  ['function', 'b', 2, 3, 'export // }\nfunction b() {}', '{}'],
  ['function', 'd', 9, 9, 'function d(x: any) {}', '{}'],
  ['function', 'e', 13, 13, 'function e(x: any) {}', '{}'],
  [
    'class',
    'K',
    14,
    24,
    'class K {\n  f = () => 1;\n  /** doc */\n  @dec\n  g(): void {}\n\n ' +
      ' h() {}\n  abstract i(): void ;\n  j = function () {} // ' +
      'trailing\n  ;\n}',
    '{\n  f = () => 1;\n  /** doc */\n  @dec\n  g(): void {}\n\n  h() ' +
      '{}\n  abstract i(): void ;\n  j = function () {} // trailing\n  ' +
      ';\n}',
  ],
  ['method', 'K.f', 15, 15, '  f = () => 1;', '1'],
  ['method', 'K.g', 16, 18, '  /** doc */\n  @dec\n  g(): void {}', '{}'],
  ['method', 'K.h', 20, 20, '  h() {}', '{}'],
  ['method', 'K.j', 22, 22, '  j = function () {}', '{}'],
  ['function', 'm2', 25, 25, 'm2 = () => 2;', '2'],
  ['function', 'k', 26, 26, 'function k(a = 1 / 2) /* c */ {}', '/* c */ {}'],
  ['function', 'l', 27, 28, 'function l() // c\n{}', '// c\n{}'],
  ['function', 'default', 29, 29, 'export default function () {}', '{}'],
  ['function', 'n', 30, 30, 'n = () => 3', '3'],
  ['method', 'p.q', 31, 31, 'q() {}', '{}'],
  ['method', 'p.r', 31, 31, 'r: () => 1', '1'],
  ['function', 's', 32, 32, 'function s() {}', '{}'],
  ['function', 't', 35, 35, 'function t() {}', '{}'],
  ['function', 'w', 36, 37, 'export\nfunction w() {}', '{}'],
  ['class', 'X', 39, 39, '@dec() export class X {}', '{}'],
  ['class', 'Y', 40, 40, 'export @dec() class Y {}', '{}'],
  ['class', 'default', 43, 43, 'export default class { m() {} }', '{ m() {} }'],
  ['method', 'default.m', 43, 43, 'm() {}', '{}'],
];

for (const [language, expected] of [
  ['typescript', TS_EXPECTED],
  ['tsx', TS_EXPECTED],
  ['javascript', JS_EXPECTED],
] as const) {
  test(
    `${language}: what the text answers is what tree-sitter answered ` +
      `(wrappers, attached siblings, member semicolons, comments before ` +
      `a block)`,
    async () => {
      assert.deepEqual(await rows(TS_CASES, language), expected);
    },
  );
}

test('python: a comment between the header and the block is part of the body; a / is not a comment', async () => {
  assert.deepEqual(await rows(PY_CASES, 'python'), [
    ['function', 'f', 1, 3, 'def f():\n    # why\n    return 1', '    # why\n    return 1'],
    ['function', 'g', 5, 7, '@dec\ndef g(x=1/2):  # c\n    pass', '# c\n    pass'],
  ]);
});

test(
  'typescript: a name read from the text alone is the identifier ' +
    'tree-sitter found (unicode, $, #private, escapes, dotted ' +
    'namespaces)',
  async () => {
    const source =
      'function ünïcode_名前() {}\nconst $el = () => 1, _x2 = () => ' +
      '2;\nclass A { #p() {} q?() {} static r<T>(x: T) {} }\nfunction ' +
      '\\u0061bc() {}\nnamespace N1.N2 { function f() {} }\nnamespace ' +
      'M1 . M2 { }\nlet o = { k: () => 1, 5: () => 2, "s": () => 3, get ' +
      'g() { return 1; } };\nfunction x‿y() {}\n';
    assert.deepEqual(await rows(source, 'typescript'), [
      ['function', 'ünïcode_名前', 1, 1, 'function ünïcode_名前() {}', '{}'],
      ['function', '$el', 2, 2, '$el = () => 1', '1'],
      ['function', '_x2', 2, 2, '_x2 = () => 2;', '2'],
      [
        'class',
        'A',
        3,
        3,
        'class A { #p() {} q?() {} static r<T>(x: T) {} }',
        '{ #p() {} q?() {} static r<T>(x: T) {} }',
      ],
      ['method', 'A.#p', 3, 3, '#p() {}', '{}'],
      ['method', 'A.q', 3, 3, 'q?() {}', '{}'],
      ['method', 'A.r', 3, 3, 'static r<T>(x: T) {}', '{}'],
      ['function', '\\u0061bc', 4, 4, 'function \\u0061bc() {}', '{}'],
      ['module', 'N1.N2', 5, 5, 'namespace N1.N2 { function f() {} }', '{ function f() {} }'],
      ['function', 'N1.N2.f', 5, 5, 'function f() {}', '{}'],
      ['module', 'M1 . M2', 6, 6, 'namespace M1 . M2 { }', '{ }'],
      ['method', 'o.k', 7, 7, 'k: () => 1', '1'],
      ['method', 'o.5', 7, 7, '5: () => 2', '2'],
      ['method', 'o.s', 7, 7, '"s": () => 3', '3'],
      ['method', 'o.g', 7, 7, 'get g() { return 1; }', '{ return 1; }'],
      ['function', 'x‿y', 8, 8, 'function x‿y() {}', '{}'],
    ]);
  },
);
