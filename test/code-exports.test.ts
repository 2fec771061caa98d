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
  const found = (await listDefinitions(source, language)).definitions.filter((definition) => definition.qualifiedName === name);
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
      assert.equal((await extractFunction(source, language, definition.name)).qualifiedName, definition.qualifiedName, definition.name);
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
  { name: 'd', oneLine: 'export declare function d(): void;', split: 'export\ndeclare function d(): void;', typescriptOnly: true },
  { name: 'N', oneLine: 'export namespace N { function f() {} }', split: 'export\nnamespace N { function f() {} }', typescriptOnly: true },
  { name: 'I', oneLine: 'export interface I { a(): void }', split: 'export\ninterface I { a(): void }', typescriptOnly: true },
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
      assert.deepEqual(await described(before + shape.split, language), await described(before + shape.oneLine, language));
    }
    const source = 'export\nfunction w() {\n  return 1;\n}\n';
    const extracted = await extractFunction(source, language, 'w');
    assert.equal(extracted.full, source.trimEnd());
    assert.deepEqual([extracted.startLine, extracted.endLine], [1, 4]);
  });

  test(`${language}: a doc comment above a split \`export\` is attached; a statement that only ends in 'export' is not the keyword`, async () => {
    const documented = '/** Doc. */\nexport\nfunction w() {}\n';
    const definition = await only(documented, language, 'w');
    assert.equal(documented.slice(definition.startOffset, definition.endOffset), documented.trimEnd());
    for (const source of ['a.export\nfunction w() {}\n', 'export;\nfunction w() {}\n', 'x = export\nfunction w() {}\n']) {
      const plain = await only(source, language, 'w');
      assert.equal(source.slice(plain.startOffset, plain.endOffset), 'function w() {}', JSON.stringify(source));
      assert.equal(plain.startLine, 2);
    }
  });

  test(`${language}: an anonymous default class is the class 'default', its members its methods, and extract finds them`, async () => {
    const source = 'export default class {\n  constructor() {}\n  m() {}\n  static s() {}\n}\n';
    assert.deepEqual(await described(source, language), ['class default', 'constructor default.constructor', 'method default.m', 'method default.s']);
    const klass = await only(source, language, 'default');
    assert.equal(source.slice(klass.startOffset, klass.endOffset), source.trimEnd());
    assert.equal((await extractFunction(source, language, 'default.m')).full, '  m() {}');
    await assertRoundTrips(source, language);
    const derived = 'export default class extends Base { m() {} }\n';
    assert.deepEqual(await described(derived, language), ['class default', 'method default.m']);
  });

  test(`${language}: anonymous default functions and generators are 'default'; named ones keep their name`, async () => {
    for (const source of ['export default function () {}\n', 'export default function* () {}\n', 'export default async () => {}\n']) {
      assert.deepEqual(await described(source, language), ['function default'], source);
      assert.equal((await extractFunction(source, language, 'default')).full, source.trimEnd());
    }
    assert.deepEqual(await described('export default async function* g() {}\n', language), ['function g']);
    assert.equal((await extractFunction('export default async function* g() {}\n', language, 'g')).full, 'export default async function* g() {}');
  });

  test(`${language}: a class assigned to a property or variable is the scope of its methods`, async () => {
    const source = 'module.exports = class {\n  m() {}\n};\nexports.A = class B { n() {} };\nlet K;\nK = class { k() {} };\nconst C = class { c() {} };\n';
    assert.deepEqual(await described(source, language), ['method module.exports.m', 'method exports.A.n', 'method K.k', 'method C.c']);
    await assertRoundTrips(source, language);
  });

  test(`${language}: what a member assigned on \`this\` holds is qualified by that member, not by the method assigning it`, async () => {
    const source = 'class C {\n  constructor() {\n    this.Helper = class { m() {} };\n    this.f = function () { function inner() {} };\n  }\n}\n';
    assert.deepEqual(await described(source, language), ['class C', 'constructor C.constructor', 'method C.Helper.m', 'method C.f', 'function C.f.inner']);
    await assertRoundTrips(source, language);
  });
}
