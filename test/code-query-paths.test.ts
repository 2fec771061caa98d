/**
 * The definitions queries name some definitions by a path (`#set! name "left:identifier"`) rather
 * than by constraining two fields of one node, which tree-sitter compiles far faster (how much:
 * bench/checks/code.ts, code.query-paths-compile). The answer must be exactly what the original
 * two-field patterns gave: the original queries are kept in test/fixtures/code-whole-queries/
 * <grammar dir>.scm and both are run over every fixture of the languages they serve, real files
 * from node_modules, and a snippet made of the cases the paths decide (every kind of left-hand
 * side, fields with and without a function or object value, declarators of every shape).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Query } from 'web-tree-sitter';
import { findDefinitions } from '../src/code/definitions.js';
import { loadGrammar, withTree } from '../src/code/grammar.js';
import { languageForPath, supportedLanguages, type LanguageInfo } from '../src/code/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(root, 'test', 'fixtures', 'code');
const wholeQueries = join(root, 'test', 'fixtures', 'code-whole-queries');

/** Real files that exercise the TypeScript and JavaScript patterns at scale, when installed. */
const REAL_FILES = [
  'node_modules/zod/src/v4/classic/schemas.ts',
  'node_modules/zod/src/v4/core/schemas.ts',
  'node_modules/commander/lib/command.js',
  'node_modules/yaml/dist/compose/composer.js',
].map((path) => join(root, path));

/** Every case the paths decide, in a file both TypeScript and JavaScript parse. */
const JS_PATH_CASES = `
class A {
  f = () => 1;
  g = function () {};
  h = function* () {};
  o = { m() {}, n: () => 2 };
  'quoted' = () => 3;
  [computed] = () => 4;
  #hidden = () => 5;
  plain = 6;
  nothing;
  static s = () => 7;
}
let x; x = () => 1;
a.b = function () {};
a.b.c = () => {};
this.d = () => {};
this.#e = () => {};
a[b] = () => {};
(a) = () => {};
[p, q] = [() => 1, () => 2];
({ r } = { r: () => 3 });
a.b = 1;
obj.prop = class {};
module.exports.run = async () => {};
exports.go = function named() {};
const m1 = () => 1, m2 = function () {}, m3 = 3;
let n1 = 1, n2 = (v) => v;
`;

/** Declarators of every shape, with and without a body, several to a line (C is C++'s subset here). */
const C_PATH_CASES = `
int plain(void) { return 0; }
int *pointer(void) { return 0; }
int **pointer2(void) { return 0; }
int ***pointer3(void) { return 0; }
int (*returns_fn(void))(int) { return 0; }
int prototype(void);
struct point { int x; };
struct point make(void) { struct point p = {0}; return p; }
struct forward;
struct { int y; } anonymous;
enum color { RED, GREEN };
enum color pick(void) { return RED; }
typedef struct named { int z; } named_t;
int first(void), second(void);
int *third(int), fourth;
`;

const CPP_PATH_CASES = `${C_PATH_CASES}
int &reference() { static int r; return r; }
const int &const_reference() { static int r; return r; }
int &&rvalue() { return 1; }
namespace ns { class A { public: int m(); int &r(); A(); ~A(); A &operator=(const A &); }; }
int ns::A::m() { return 1; }
int &ns::A::r() { static int x; return x; }
ns::A::A() {}
ns::A::~A() {}
ns::A &ns::A::operator=(const ns::A &) { return *this; }
template <typename T> T *make_ptr() { return nullptr; }
class Declared;
struct S { void inline_method() {} };
enum class Scoped { One };
auto trailing() -> int { return 1; }
struct Many { int a, b; int &ref(), val(); int get() { return a; } };
struct Conv { explicit operator bool() const { return true; } operator int(); };
Conv::operator int() { return 1; }
ns::Conv::operator long() { return 2; }
MACRO namespace NAME
{
int inside() { return 3; }
}
`;

/** TypeScript's `export =` of a class or function, named or not (several in one file: each is matched). */
const TS_PATH_CASES = `${JS_PATH_CASES}
export = class { m() {} };
export = class Named { n() {} };
export = function () {};
export = function named() {};
export = function* () {};
export = async () => 1;
export = value;
`;

const PATH_CASES: Readonly<Record<string, string>> = {
  typescript: TS_PATH_CASES,
  javascript: JS_PATH_CASES,
  c: C_PATH_CASES,
  cpp: CPP_PATH_CASES,
};

function sourcesFor(info: LanguageInfo): { label: string; source: string }[] {
  const sources = readdirSync(fixtures)
    .filter(
      (file) => languageForPath(file)?.grammarDir === info.grammarDir && languageForPath(file)?.name === info.name,
    )
    .map((file) => ({ label: file, source: readFileSync(join(fixtures, file), 'utf8') }));
  for (const path of REAL_FILES) {
    if (existsSync(path) && languageForPath(path)?.grammarDir === info.grammarDir)
      sources.push({ label: path, source: readFileSync(path, 'utf8') });
  }
  const cases = PATH_CASES[info.grammarDir];
  if (cases) sources.push({ label: 'path cases', source: cases });
  return sources;
}

const languagesWithWholeQuery = supportedLanguages().filter((info) =>
  existsSync(join(wholeQueries, `${info.grammarDir}.scm`)),
);

test('the whole queries are kept for the languages whose queries use paths', () => {
  for (const info of supportedLanguages()) {
    const query = readFileSync(join(root, 'grammars', info.grammarDir, 'definitions.scm'), 'utf8');
    if (/^[^;]*#set! (name|receiver)/m.test(query))
      assert.ok(languagesWithWholeQuery.includes(info), `${info.name} uses paths`);
  }
  assert.ok(languagesWithWholeQuery.length >= 3);
});

for (const info of languagesWithWholeQuery) {
  test(`${info.name}: the query with paths finds exactly what the whole query finds`, async () => {
    const grammar = await loadGrammar(info);
    const whole = new Query(grammar.language, readFileSync(join(wholeQueries, `${info.grammarDir}.scm`), 'utf8'));
    try {
      const sources = sourcesFor(info);
      assert.ok(sources.length >= 2, `${info.name}: fixtures to compare on`);
      for (const { label, source } of sources) {
        const [withPaths, withWhole] = await withTree(source, info, (tree) => [
          findDefinitions(tree, grammar, info, source),
          findDefinitions(tree, { ...grammar, definitionsQuery: whole }, info, source),
        ]);
        assert.deepEqual(withPaths, withWhole, `${info.name} ${label}`);
        if (label !== 'empty') assert.ok(withWhole.length > 0, `${info.name} ${label}: some definitions`);
      }
    } finally {
      whole.delete();
    }
  });
}

test(
  'several declarators on one line: each bound function is listed, ' + 'prototypes and plain values are not',
  async () => {
    const { listDefinitions } = await import('../src/code/index.js');
    const names = async (source: string, language: string): Promise<string[]> =>
      (await listDefinitions(source, language)).definitions.map((definition) => definition.qualifiedName);
    assert.deepEqual(
      await names('const m1 = () => 1, m2 = function () {}, m3 = 3;\nlet n1 = 1, n2 = (v) => v;\n', 'javascript'),
      ['m1', 'm2', 'n2'],
    );
    assert.deepEqual(
      await names('int first(void), second(void);\nint *third(int), fourth;\nint add(int a) { return a; }\n', 'c'),
      ['add'],
    );
    assert.deepEqual(await names('struct Many { int a, b; int &ref(), val(); int get() { return a; } };\n', 'cpp'), [
      'Many',
      'Many::get',
    ]);
  },
);
