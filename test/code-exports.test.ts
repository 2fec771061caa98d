/**
 * JavaScript/TypeScript exports the grammar reads in a way of its own: `export` on a line of its
 * own before the declaration (tree-sitter ends a statement at that line break), and anonymous
 * default exports and classes bound by assignment, whose members are methods of them. Checked in
 * JavaScript, TypeScript and TSX; every listed function must come back through extractFunction.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractFunction, listDefinitions, listFunctions, type Definition } from '../src/code/index.js';

const LANGUAGES = ['javascript', 'typescript', 'tsx'] as const;

async function described(source: string, language: string): Promise<string[]> {
  const { definitions } = await listDefinitions(source, language);
  return definitions.map((definition) => `${definition.kind} ${definition.qualifiedName}`);
}

async function only(source: string, language: string, name: string): Promise<Definition> {
  const found = (await listDefinitions(source, language)).definitions.filter(
    (definition) => definition.qualifiedName === name,
  );
  assert.equal(found.length, 1, `${language}: one '${name}' in ${JSON.stringify(source)}`);
  return found[0]!;
}

/** Every function listed is extracted back by its qualified name, and by its bare name when that is unique. */
async function assertRoundTrips(source: string, language: string): Promise<void> {
  const { definitions } = await listFunctions(source, language);
  assert.ok(definitions.length > 0);
  for (const definition of definitions) {
    const extracted = await extractFunction(source, language, definition.qualifiedName);
    assert.equal(extracted.qualifiedName, definition.qualifiedName);
    assert.equal(extracted.full, source.slice(definition.startOffset, definition.endOffset));
    if (definitions.filter((other) => other.name === definition.name).length === 1) {
      assert.equal(
        (await extractFunction(source, language, definition.name)).qualifiedName,
        definition.qualifiedName,
        definition.name,
      );
    }
  }
}

/** `export` and the declaration on one line, and the same with a line break after `export`. */
const SPLIT_EXPORTS: { name: string; oneLine: string; split: string; typescriptOnly?: boolean }[] = [
  { name: 'w', oneLine: 'export function w() {}', split: 'export\nfunction w() {}' },
  { name: 'w', oneLine: 'export async function w() {}', split: 'export\n\n  async function w() {}' },
  { name: 'w', oneLine: 'export /* c */ function w() {}', split: 'export /* c */ // d\r\nfunction w() {}' },
  { name: 'f', oneLine: 'export const f = () => 1;', split: 'export\nconst f = () => 1;' },
  { name: 'C', oneLine: 'export class C { m() {} }', split: 'export\nclass C { m() {} }' },
  {
    name: 'd',
    oneLine: 'export declare function d(): void;',
    split: 'export\ndeclare function d(): void;',
    typescriptOnly: true,
  },
  {
    name: 'N',
    oneLine: 'export namespace N { function f() {} }',
    split: 'export\nnamespace N { function f() {} }',
    typescriptOnly: true,
  },
  {
    name: 'I',
    oneLine: 'export interface I { a(): void }',
    split: 'export\ninterface I { a(): void }',
    typescriptOnly: true,
  },
];

for (const language of LANGUAGES) {
  test(`${language}: \`export\` on its own line belongs to the definition after it, as on one line`, async () => {
    const before = 'const first = 1;\n';
    for (const shape of SPLIT_EXPORTS) {
      if (shape.typescriptOnly && language === 'javascript') continue;
      const oneLine = await only(before + shape.oneLine, language, shape.name);
      const split = await only(before + shape.split, language, shape.name);
      assert.equal(split.startLine, oneLine.startLine, shape.split);
      assert.equal(split.startOffset, oneLine.startOffset, shape.split);
      assert.equal(split.kind, oneLine.kind, shape.split);
      assert.equal((before + shape.split).slice(split.startOffset, split.endOffset), shape.split);
      assert.deepEqual(
        await described(before + shape.split, language),
        await described(before + shape.oneLine, language),
      );
    }
    const source = 'export\nfunction w() {\n  return 1;\n}\n';
    const extracted = await extractFunction(source, language, 'w');
    assert.equal(extracted.full, source.trimEnd());
    assert.deepEqual([extracted.startLine, extracted.endLine], [1, 4]);
  });

  test(
    `${language}: a doc comment above a split \`export\` is attached; ` +
      `a statement that only ends in 'export' is not the keyword`,
    async () => {
      const documented = '/** Doc. */\nexport\nfunction w() {}\n';
      const definition = await only(documented, language, 'w');
      assert.equal(documented.slice(definition.startOffset, definition.endOffset), documented.trimEnd());
      for (const source of [
        'a.export\nfunction w() {}\n',
        'export;\nfunction w() {}\n',
        'x = export\nfunction w() {}\n',
      ]) {
        const plain = await only(source, language, 'w');
        assert.equal(source.slice(plain.startOffset, plain.endOffset), 'function w() {}', JSON.stringify(source));
        assert.equal(plain.startLine, 2);
      }
    },
  );

  test(
    `${language}: an anonymous default class is the class 'default', ` +
      `its members its methods, and extract finds them`,
    async () => {
      const source = 'export default class {\n  constructor() {}\n  m() {}\n  static s() {}\n}\n';
      assert.deepEqual(await described(source, language), [
        'class default',
        'constructor default.constructor',
        'method default.m',
        'method default.s',
      ]);
      const klass = await only(source, language, 'default');
      assert.equal(source.slice(klass.startOffset, klass.endOffset), source.trimEnd());
      assert.equal((await extractFunction(source, language, 'default.m')).full, '  m() {}');
      await assertRoundTrips(source, language);
      const derived = 'export default class extends Base { m() {} }\n';
      assert.deepEqual(await described(derived, language), ['class default', 'method default.m']);
    },
  );

  test(
    `${language}: anonymous default functions and generators are ` + `'default'; named ones keep their name`,
    async () => {
      for (const source of [
        'export default function () {}\n',
        'export default function* () {}\n',
        'export default async () => {}\n',
      ]) {
        assert.deepEqual(await described(source, language), ['function default'], source);
        assert.equal((await extractFunction(source, language, 'default')).full, source.trimEnd());
      }
      assert.deepEqual(await described('export default async function* g() {}\n', language), ['function g']);
      assert.equal(
        (await extractFunction('export default async function* g() {}\n', language, 'g')).full,
        'export default async function* g() {}',
      );
    },
  );

  test(`${language}: a class assigned to a property or variable is the scope of its methods`, async () => {
    const source =
      'module.exports = class {\n  m() {}\n};\nexports.A = class B { ' +
      'n() {} };\nlet K;\nK = class { k() {} };\nconst C = class { c() ' +
      '{} };\n';
    assert.deepEqual(await described(source, language), [
      'method module.exports.m',
      'method exports.A.n',
      'method K.k',
      'method C.c',
    ]);
    await assertRoundTrips(source, language);
  });

  test(
    `${language}: what a member assigned on \`this\` holds is ` +
      `qualified by that member, not by the method assigning it`,
    async () => {
      const source =
        'class C {\n  constructor() {\n    this.Helper = class { m() {} ' +
        '};\n    this.f = function () { function inner() {} };\n  }\n}\n';
      assert.deepEqual(await described(source, language), [
        'class C',
        'constructor C.constructor',
        'method C.Helper.m',
        'method C.f',
        'function C.f.inner',
      ]);
      await assertRoundTrips(source, language);
    },
  );
}

for (const language of ['typescript', 'tsx'] as const) {
  test(`${language}: \`export = class\` and \`export = function\` are named as \`export default\` is`, async () => {
    const anonymous = 'export = class {\n  constructor() {}\n  m() {}\n};\n';
    assert.deepEqual(await described(anonymous, language), [
      'class default',
      'constructor default.constructor',
      'method default.m',
    ]);
    const klass = await only(anonymous, language, 'default');
    assert.equal(anonymous.slice(klass.startOffset, klass.endOffset), anonymous.trimEnd());
    assert.equal((await extractFunction(anonymous, language, 'default.m')).full, '  m() {}');
    await assertRoundTrips(anonymous, language);
    assert.deepEqual(await described('export = class Named extends Base { n() {} }\n', language), [
      'class Named',
      'method Named.n',
    ]);
    for (const source of ['export = function () {}\n', 'export = function* () {}\n', 'export = async () => {};\n']) {
      assert.deepEqual(await described(source, language), ['function default'], source);
      assert.equal((await extractFunction(source, language, 'default')).full, source.trimEnd());
    }
    assert.deepEqual(await described('export = function named() { function inner() {} };\n', language), [
      'function named',
      'function named.inner',
    ]);
    assert.deepEqual(await described('export = value;\nexport = { a: 1 };\n', language), []);
  });

  test(
    `${language}: an anonymous abstract default class is the class ` + `'default'; a named one keeps its name`,
    async () => {
      const source =
        'export default abstract class<T> extends Base<T> implements Shape {\n' +
        '  private x = 1;\n' +
        '  abstract area(): number;\n' +
        '  protected describe(): string { return `${this.area()}`; }\n' +
        '  static make = () => 2;\n' +
        '}\n';
      const list = await listDefinitions(source, language);
      assert.equal(list.syntaxErrors.count, 0);
      assert.deepEqual(await described(source, language), [
        'class default',
        'method default.area',
        'method default.describe',
        'method default.make',
      ]);
      const klass = await only(source, language, 'default');
      assert.equal(source.slice(klass.startOffset, klass.endOffset), source.trimEnd());
      assert.equal(
        (await extractFunction(source, language, 'describe')).full,
        '  protected describe(): string { return `${this.area()}`; }',
      );
      await assertRoundTrips(source, language);
      assert.deepEqual(await described('export default abstract class { m() {} }\n', language), [
        'class default',
        'method default.m',
      ]);
      assert.deepEqual(await described('export default abstract class A { m() {} }\n', language), [
        'class A',
        'method A.m',
      ]);
      assert.deepEqual(await described('export default class A { m() {} }\n', language), ['class A', 'method A.m']);
      // Not the keyword sequence: left as written.
      assert.deepEqual(
        await described('const s = "export default abstract class {";\nconst abstract = 1;\n', language),
        [],
      );
    },
  );
}

for (const language of LANGUAGES) {
  test(
    `${language}: \`export\` and \`default\` on separate lines export ` + `the definition after them, as on one line`,
    async () => {
      const named = 'const first = 1;\nexport\ndefault function f() {\n  return 1;\n}\n';
      const list = await listDefinitions(named, language);
      assert.equal(list.syntaxErrors.count, 0);
      const f = await only(named, language, 'f');
      assert.equal(named.slice(f.startOffset, f.endOffset), 'export\ndefault function f() {\n  return 1;\n}');
      assert.deepEqual([f.startLine, f.endLine], [2, 5]);
      assert.equal(named.slice(f.body!.startOffset, f.body!.endOffset), '{\n  return 1;\n}');
      const crlf = 'export\r\n  default class {\r\n  m() {}\r\n}\r\n';
      assert.deepEqual(await described(crlf, language), ['class default', 'method default.m']);
      const m = await only(crlf, language, 'default.m');
      assert.deepEqual([m.startLine, m.endLine], [3, 3]);
      assert.equal((await only(crlf, language, 'default')).startLine, 1);
      assert.deepEqual(await described('export  \n\tdefault async () => {};\n', language), ['function default']);
      // In a template literal the same text is not code, and stays a string.
      assert.deepEqual(await described('const s = `\nexport\ndefault function f() {}\n`;\n', language), []);
      // `default` alone on its line has no blank after it to take the line break: left as the
      // grammar reads it (the function is listed, without the keywords).
      const unsupported = 'export\ndefault\nfunction g() {}\n';
      assert.equal((await only(unsupported, language, 'g')).startLine, 3);
    },
  );
}

for (const language of LANGUAGES) {
  test(
    `${language}: an object assigned or exported as the default is ` +
      `the scope of its members, as one bound to a variable is`,
    async () => {
      const source =
        'module.exports = {\n  m() {},\n  n: function () {},\n  o: () => 1,\n  nested: { p() {} },\n};\n' +
        'Foo.prototype = { constructor: Foo, q: function () {} };\n' +
        'exports.utils = { r() {} };\n' +
        'let cache;\ncache = { s() {} };\n' +
        'const bound = { t() {} };\n';
      assert.deepEqual(await described(source, language), [
        'method module.exports.m',
        'method module.exports.n',
        'method module.exports.o',
        'method module.exports.nested.p',
        'method Foo.prototype.q',
        'method exports.utils.r',
        'method cache.s',
        'method bound.t',
      ]);
      await assertRoundTrips(source, language);
      // The bare name still finds it; the qualified name tells it from a function of the same name.
      const twice = 'function m() {}\nmodule.exports = { m() { return m(); } };\n';
      assert.equal((await extractFunction(twice, language, 'module.exports.m')).startLine, 2);
      assert.equal((await extractFunction(twice, language, 'm:1')).qualifiedName, 'm');
      assert.equal(
        (await extractFunction('module.exports = { only() {} };\n', language, 'only')).qualifiedName,
        'module.exports.only',
      );

      const vue = 'export default {\n  data() { return {}; },\n  methods: { go() {} },\n};\n';
      assert.deepEqual(await described(vue, language), ['method default.data', 'method default.methods.go']);
      await assertRoundTrips(vue, language);
      // An object that is not assigned or exported names nothing.
      assert.deepEqual(await described('call({ f() {} });\n', language), ['function f']);
    },
  );
}
