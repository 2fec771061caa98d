/**
 * A `.h` header is read as C++ when its text shows C++, else as C (src/code/header-language.ts):
 * each sign of C++ alone, the C constructs that must not count (comments, strings, macros,
 * `extern "C"`, blocks for C++ in a header written for both, C23 attributes, C++ keywords used as
 * C names), the scan's bound, and the end-to-end effect on what a C++ header lists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { extractFunction, languageForPath, listFunctions, requireLanguageForPath } from '../src/code/index.js';
import { headerLooksLikeCpp, MAX_SCANNED_CHARS } from '../src/code/header-language.js';
import { fixturePath } from './helpers/repo.js';

const CPP_HEADERS: Record<string, string> = {
  'class with a body': '#pragma once\nclass Widget {\n  int x;\n};\n',
  'class with a base': 'class Button\n    : public Widget {\n};\n',
  'class forward declaration': 'class Widget;\nint f(Widget *w);\n',
  'class with an export macro': 'class API_EXPORT Widget final {\n};\n',
  'enum class': 'enum class Color { red, green };\n',
  namespace: '#ifndef A_H\n#define A_H\nnamespace net {\nint f();\n}\n#endif\n',
  'nested namespace': 'namespace a::b {\n}\n',
  'anonymous namespace': 'namespace {\nint hidden;\n}\n',
  'namespace with a visibility macro': 'namespace std _GLIBCXX_VISIBILITY(default)\n{\n}\n',
  'namespace alias': 'namespace fs = std::filesystem;\n',
  'using namespace': 'using namespace std;\n',
  template: 'template <typename T>\nT twice(T x) { return x + x; }\n',
  'template without a blank': 'template<class T> struct Box;\n',
  'access specifier': 'struct S {\n public:\n  int x;\n};\n',
  'qualified name': 'int f(std::size_t n);\n',
  'qualified destructor': 'Widget::~Widget();\n',
  'extensionless standard include': '#include <stdint.h>\n#include <vector>\nint f(void);\n',
  'version check': '#if __cplusplus >= 201103L\nnamespace x {\n}\n#endif\n',
};

const C_HEADERS: Record<string, string> = {
  'plain C':
    '#ifndef A_H\n#define A_H\n#include <stddef.h>\ntypedef struct ' +
    'node { struct node *next; } node;\nint count(const node ' +
    '*n);\n#endif\n',
  'extern "C" guard': '#ifdef __cplusplus\nextern "C" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n',
  'C++ block for C++ readers':
    '#if defined(__cplusplus)\ntemplate <typename T> T wrap(T ' +
    'x);\nnamespace c { class Wrapper {}; }\n#endif\nint f(void);\n',
  'C++ block after #ifndef __cplusplus #else':
    '#ifndef __cplusplus\n# define is_ok(x) ok(x)\n#else\nextern ' +
    '"C++" { inline int is_ok(float x) { return 1; } }\n#endif\n',
  'extern "C++" under a macro of its own (glibc string.h)':
    '#ifdef __CORRECT_ISO_CPP_STRING_H_PROTO\nextern "C++" {\nchar *strchr(char *s, int c);\n}\n#endif\n',
  'C++ words in comments':
    '/* class Widget { public: }; namespace x { } template <T> std::vector */\n// using namespace std;\nint f(void);\n',
  'C++ words in strings': 'static const char *v = "std::string";\nstatic const char c = \':\';\n',
  'C++ in a macro': '#define DECLARE(name) \\\n  class name { public: }; \\\n  namespace x {}\nint f(void);\n',
  'C++ keywords as C names': 'struct s { int class; int new; int template; };\nint this, private;\n',
  'C23 attribute': '[[gnu::unused]] static int f(void);\n[[deprecated]] int g(void);\n',
  'label and bit-field': 'struct flags { unsigned a : 1; unsigned b : 2; };\n',
  'Objective-C interface': '@interface Widget : NSObject\n- (void)draw;\n@end\n',
};

test('a header with any one sign of C++ is C++', () => {
  for (const [what, source] of Object.entries(CPP_HEADERS)) {
    assert.equal(headerLooksLikeCpp(source), true, what);
    assert.equal(languageForPath('/src/x.h', source)?.name, 'cpp', what);
    assert.equal(languageForPath('/src/X.H', source)?.name, 'cpp', what);
  }
});

test('a C header stays C: comments, strings, macros, extern "C" and C++-only blocks are not signs', () => {
  for (const [what, source] of Object.entries(C_HEADERS)) {
    assert.equal(headerLooksLikeCpp(source), false, what);
    assert.equal(languageForPath('/src/x.h', source)?.name, 'c', what);
  }
});

test('only .h is decided by its text; without the text a .h is C', () => {
  const cpp = CPP_HEADERS.namespace!;
  assert.equal(languageForPath('/src/x.h')?.name, 'c');
  assert.equal(requireLanguageForPath('/src/x.h')?.name, 'c');
  assert.equal(requireLanguageForPath('/src/x.h', cpp).name, 'cpp');
  assert.equal(languageForPath('/src/x.c', cpp)?.name, 'c');
  assert.equal(languageForPath('/src/x.hpp', C_HEADERS['plain C'])?.name, 'cpp');
  assert.equal(languageForPath('/src/x.py', cpp)?.name, 'python');
});

test(
  `the scan reads the first ${MAX_SCANNED_CHARS} characters only, ` + `and ends conditionals and comments cleanly`,
  () => {
    const comment = `/*${' licence text\n'.repeat(Math.ceil(MAX_SCANNED_CHARS / 14))}*/\n`;
    assert.ok(comment.length > MAX_SCANNED_CHARS);
    assert.equal(headerLooksLikeCpp(`${comment}namespace late {\n}\n`), false);
    assert.equal(headerLooksLikeCpp(`/* short */\nnamespace early {\n}\n${comment}`), true);
    // Unbalanced input (an #endif too many, a comment or string never closed) does not throw.
    assert.equal(headerLooksLikeCpp('#endif\n#endif\nnamespace n {\n}\n'), true);
    assert.equal(headerLooksLikeCpp('#ifdef __cplusplus\nnamespace n {\n'), false);
    assert.equal(headerLooksLikeCpp('/* never closed\nnamespace n {\n'), false);
    assert.equal(headerLooksLikeCpp('"never closed\nnamespace n {\n}\n'), true);
    assert.equal(headerLooksLikeCpp(''), false);
  },
);

test('a C++ .h header lists its classes, namespaces, templates and methods; a C header its functions', async () => {
  const widgetPath = fixturePath('code', 'widget.h');
  const widget = readFileSync(widgetPath, 'utf8');
  const cpp = await listFunctions(widget, requireLanguageForPath(widgetPath, widget));
  assert.equal(cpp.language, 'cpp');
  assert.equal(cpp.syntaxErrors.count, 0);
  assert.deepEqual(
    cpp.definitions.map(
      (definition) => `${definition.kind} ${definition.qualifiedName} ${definition.startLine}-${definition.endLine}`,
    ),
    [
      'method ui::Rect::area 17-17',
      'method ui::Widget::Widget 22-22',
      'method ui::Widget::~Widget 23-23',
      'method ui::Widget::name 25-25',
      'method ui::Widget::invalidate 29-29',
      'method ui::Registry::add 39-39',
      'method ui::Registry::size 40-40',
      'function ui::clamp 46-48',
    ],
  );
  assert.equal(
    (await extractFunction(widget, requireLanguageForPath(widgetPath, widget), 'Registry::add')).full,
    '  void add(T item) { items_.push_back(item); }',
  );
  // Read as C (what a .h was before), the same header loses nearly everything.
  const asC = await listFunctions(widget, 'c');
  assert.ok(asC.syntaxErrors.count > 0);
  assert.ok(asC.definitions.length < 2);

  const ringPath = fixturePath('code', 'ring_buffer.h');
  const ring = readFileSync(ringPath, 'utf8');
  const c = await listFunctions(ring, requireLanguageForPath(ringPath, ring));
  assert.equal(c.language, 'c');
  assert.deepEqual(
    c.definitions.map((definition) => definition.qualifiedName),
    ['ring_used', 'ring_is_empty'],
  );
});
