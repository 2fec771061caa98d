/**
 * Whether a `.h` header is C++ rather than C, from its text: `.h` is both languages' header
 * extension, and reading a C++ header with the C grammar loses its classes, namespaces, templates
 * and methods. Without a sign of C++ the header stays C (a plain C header parses best as C: C code
 * may use C++ keywords such as `class` or `new` as names).
 *
 * A sign of C++ is a construct C has no reading for, outside comments, string literals,
 * macro definitions and preprocessor blocks conditional on `__cplusplus` (a C header's C++ wrapper,
 * `#ifdef __cplusplus extern "C" { #endif`, is still a C header; `extern "C"` alone says nothing,
 * nor does `extern "C++"`, which glibc's string.h and wchar.h use in blocks for C++ readers under
 * a macro of their own):
 * - `template <`, `namespace N {` (also `namespace N MACRO(…) {`), `namespace {`, `namespace A = B;`,
 *   `using namespace`;
 * - a class declared or defined: `class N {`, `class N : public B`, `class N;`, `enum class N`;
 * - an access specifier opening a line: `public:`, `private:`, `protected:`;
 * - a qualified name `a::b` (a C23 attribute `[[gnu::unused]]` aside);
 * - `#include <vector>`: a standard C++ header has no extension, every C one is `<name.h>`.
 *
 * Only the first MAX_SCANNED_CHARS characters are read, once, with no parse: a header shows its
 * language in its first declarations, and a list must not cost measurably more for asking.
 */
import { extname } from 'node:path';
import { languageByName, languageForPath, type LanguageInfo } from './languages.js';

/**
 * The language of a file by its extension, except that a `.h` header whose text shows C++ is C++.
 * (Not in languages.ts: start-up loads that for the extensions alone, and it stays a leaf.)
 */
export function languageForSource(path: string, source: string): LanguageInfo | undefined {
  if (extname(path).toLowerCase() === '.h' && headerLooksLikeCpp(source)) return languageByName('cpp');
  return languageForPath(path);
}

/**
 * How much of a header is scanned: past a long licence comment and the includes. Of 2,051 C++
 * headers in /usr/include (LLVM, libstdc++, V8, ICU), 1,947 show C++ in their first 2 KB, 2,035
 * in 4 KB, 2,046 in 8 KB (the five others open with a comment longer than that).
 */
export const MAX_SCANNED_CHARS = 8 * 1024;

/**
 * Where a sign of C++ can start: its keyword, or `::`. Each hit is then checked by the pattern of
 * its sign at that place (CPP_SIGNS); one pass of this plain alternation over the text is several
 * times cheaper than one regex trying every sign at every word.
 */
const SIGN_START = /\b(?:template|namespace|using|class|public|private|protected)\b|::/g;

/** A sign's keyword or `::` anywhere, or an extensionless include: the scan is worth doing. */
const ANY_CANDIDATE = /\b(?:template|namespace|using|class|public|private|protected)\b|::|#\s*include\s*<[^>.]+>/;

/** The signs of C++ listed above, each tried where its keyword (or `::`) was found. */
const CPP_SIGNS: Readonly<Record<string, RegExp>> = {
  template: /template\s*</y,
  namespace:
    /namespace\s*(?:[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*\s*)?\{|namespace\s+[A-Za-z_]\w*\s*=|namespace\s+[A-Za-z_]\w*\s+[A-Za-z_]\w*\s*\([^()]*\)\s*\{/y,
  using: /using\s+namespace\b/y,
  class: /class\s+(?:[A-Za-z_]\w*\s+){0,3}[A-Za-z_]\w*\s*(?:final\s*)?[{:;]/y,
  public: /public[ \t]*:(?!:)/y,
  private: /private[ \t]*:(?!:)/y,
  protected: /protected[ \t]*:(?!:)/y,
};

/** A C23 attribute, whose names can be qualified (`[[gnu::unused]]`): not C++. */
const ATTRIBUTE = /\[\[[^\]]*\]\]/g;

/** What follows `#include` for a header without an extension, `<vector>`. */
const EXTENSIONLESS_INCLUDE = /^\s*<[^>.]+>/;

/**
 * Comments, string and character literals, and line continuations: what the scan blanks or joins.
 * A block comment becomes a blank or the newlines it spans, so directives keep their own lines.
 */
const NOT_CODE =
  /\/\*[\s\S]*?(?:\*\/|$)|\/\/(?:[^\n\\]|\\[\s\S])*|"(?:[^"\\\n]|\\[\s\S])*"|'(?:[^'\\\n]|\\[\s\S])*'|\\\r?\n/g;

/** True when the text of a `.h` file shows C++ (see the module comment); false for C. */
export function headerLooksLikeCpp(source: string): boolean {
  const head = source.length > MAX_SCANNED_CHARS ? source.slice(0, MAX_SCANNED_CHARS) : source;
  // Most C headers have no candidate at all, not even in a comment: one pass says so.
  if (!ANY_CANDIDATE.test(head)) return false;
  const code = codeOutsideDirectives(head.replace(NOT_CODE, blankNotCode));
  if (code === true) return true;
  SIGN_START.lastIndex = 0;
  for (let hit = SIGN_START.exec(code); hit; hit = SIGN_START.exec(code)) {
    if (hit[0] === '::' ? isQualifiedName(code, hit.index) : isSignAt(code, hit.index, hit[0])) return true;
  }
  return false;
}

function isSignAt(code: string, at: number, keyword: string): boolean {
  const sign = CPP_SIGNS[keyword]!;
  sign.lastIndex = at;
  if (!sign.test(code)) return false;
  // An access specifier opens its line.
  if (keyword.startsWith('p')) {
    for (let before = at - 1; before >= 0 && code[before] !== '\n'; before--)
      if (code[before] !== ' ' && code[before] !== '\t') return false;
  }
  return true;
}

/** `a::b` (blanks allowed around `::`, `a::~b`), outside a C23 attribute `[[ns::name]]`. */
function isQualifiedName(code: string, at: number): boolean {
  if (
    !/[A-Za-z_0-9]\s*$/.test(code.slice(Math.max(0, at - 64), at)) ||
    !/^\s*~?[A-Za-z_]/.test(code.slice(at + 2, at + 66))
  )
    return false;
  const line = code.lastIndexOf('\n', at) + 1;
  const attributes = code.slice(line, at).lastIndexOf('[[');
  return attributes < 0 || code.slice(line + attributes, at).includes(']]');
}

/**
 * The code lines of `text` outside preprocessor directives and outside blocks conditional on
 * __cplusplus, joined; or true when a directive itself shows C++ (`#include <vector>`).
 */
function codeOutsideDirectives(text: string): string | true {
  const kept: string[] = [];
  /** Per open conditional: whether it tests for __cplusplus (its every branch is skipped). */
  const conditionals: boolean[] = [];
  let skipped = 0;
  let runStart = 0;
  for (let lineStart = 0; lineStart <= text.length; ) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    let first = lineStart;
    while (first < lineEnd && (text[first] === ' ' || text[first] === '\t' || text[first] === '\r')) first++;
    if (text[first] === '#') {
      if (skipped === 0 && runStart < lineStart) kept.push(text.slice(runStart, lineStart));
      const [, name = '', condition = ''] = DIRECTIVE.exec(text.slice(first + 1, lineEnd)) ?? [];
      if (name === 'if' || name === 'ifdef' || name === 'ifndef') {
        const dual = testsForCpp(name, condition);
        conditionals.push(dual);
        if (dual) skipped++;
      } else if (name.startsWith('elif')) {
        if (
          conditionals.length > 0 &&
          !conditionals[conditionals.length - 1] &&
          testsForCpp(name.slice(2), condition)
        ) {
          conditionals[conditionals.length - 1] = true;
          skipped++;
        }
      } else if (name === 'endif') {
        if (conditionals.pop()) skipped--;
      } else if (name === 'include' && skipped === 0 && EXTENSIONLESS_INCLUDE.test(condition)) {
        return true;
      }
      runStart = lineEnd + 1;
    } else if (skipped > 0) runStart = lineEnd + 1;
    lineStart = lineEnd + 1;
  }
  if (skipped === 0 && runStart < text.length) kept.push(text.slice(runStart));
  return kept.join('\n').replace(ATTRIBUTE, ' ');
}

const DIRECTIVE = /^\s*(\w*)(.*)$/;

/**
 * Whether a conditional tests whether the file is read as C++ (`#ifdef __cplusplus`, `#if
 * defined(__cplusplus) && …`): a block for one of the two languages in a header written for both.
 * A comparison of its value alone (`#if __cplusplus >= 201103L`) is a C++ header's version check.
 */
function testsForCpp(name: string, condition: string): boolean {
  if (name === 'ifdef' || name === 'ifndef') return /^\s*__cplusplus\b/.test(condition);
  return /\bdefined\s*\(?\s*__cplusplus\b/.test(condition) || /^\s*!?\s*__cplusplus\s*$/.test(condition);
}

/** Comments become a blank (or the line breaks they span), strings `""`, continuations a blank. */
function blankNotCode(match: string): string {
  if (match.startsWith('/*')) return match.includes('\n') ? match.replace(/[^\n]+/g, ' ') : ' ';
  if (match[0] === '"') return '""';
  if (match[0] === "'") return "''";
  return ' ';
}
