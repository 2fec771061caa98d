/**
 * The text tree-sitter is given for a source: the source itself, except for shapes the language
 * allows (or its preprocessor makes valid) and its grammar misreads, each rewritten in place into
 * a shape the grammar reads as the author meant, with the same length and the same line breaks
 * before every token, so every node's offsets and rows are those of the source (definitions.ts
 * slices the source itself, never this text):
 *
 * - `export` and `default` on separate lines (`export\ndefault function f() {}`): the grammar
 *   ends a statement at the line break after `export` (as if it were a name) and the rest is a
 *   syntax error. The line breaks between the two keywords are moved to the blanks right after
 *   `default`, which the grammar reads the same way (`export default\nfunction f() {}`). When
 *   those blanks are too few to take them (`export\ndefault\nfunction`), the text is left alone.
 * - TypeScript's anonymous abstract default class (`export default abstract class { … }`, also
 *   with `extends`, `implements` or type parameters): the grammar has no such rule and reads its
 *   body as an object, or worse. `abstract` is blanked, which leaves a class it reads (a class's
 *   members may be abstract in the grammar either way), listed as the class `default`.
 * - C++ export and attribute macros between `class`/`struct`/`union` and the name (`class
 *   V8_EXPORT Isolate : public Base {`, `class Q_CORE_EXPORT QString {`): the grammar takes the
 *   macro for the name and the rest for a function, losing the class and its methods. Upper-case
 *   words there, before the name and a `{`, a base clause or `final`, are blanked: after `class`
 *   only a macro can stand before the name.
 *
 * Each is recognised only where it cannot be anything else: `export` alone on its line and
 * `default` first on a later line; `export default abstract class` then `{`, `<`, `extends` or
 * `implements`; `class`, words in capitals, a name, then a class head's next token. A line comment
 * cannot hide a line-initial `export`, and inside a block comment, a string or a macro body the
 * rewrite changes no token. Each costs one indexOf or regex pass over the source; the rewrites of
 * a file are joined once.
 */

const JS_LIKE: ReadonlySet<string> = new Set(['javascript', 'typescript', 'tsx']);
const CPP = 'cpp';
const TS_LIKE: ReadonlySet<string> = new Set(['typescript', 'tsx']);

/** The text to parse for `source` in `language` (a language id); the source itself when nothing applies. */
export function textToParse(source: string, language: string): string {
  if (language === CPP) return unmacroClassHeads(source);
  if (!JS_LIKE.has(language)) return source;
  let text = joinSplitDefaultExports(source);
  if (TS_LIKE.has(language)) text = unabstractDefaultClasses(text);
  return text;
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

function isWordCode(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x5f ||
    code === 0x24 ||
    code >= 0x80
  );
}

/** `export⏎default␠…` → `export␠default⏎…`: the same characters' offsets, the line breaks after `default`. */
function joinSplitDefaultExports(source: string): string {
  const rewrite = new Rewrite(source);
  for (let at = source.indexOf('default'); at >= 0; at = source.indexOf('default', at + 7)) {
    // `default` starts its line (after blanks) and ends in blanks…
    const after = at + 7;
    let gapAfterEnd = after;
    while (gapAfterEnd < source.length && isBlank(source.charCodeAt(gapAfterEnd))) gapAfterEnd++;
    if (gapAfterEnd === after || gapAfterEnd === source.length) continue;
    // …the blanks before it hold a line break, and before them stands `export` alone on its line.
    let gapBeforeStart = at;
    while (gapBeforeStart > 0 && isBlank(source.charCodeAt(gapBeforeStart - 1))) gapBeforeStart--;
    const gapBefore = source.slice(gapBeforeStart, at);
    if (!gapBefore.includes('\n') || !source.startsWith('export', gapBeforeStart - 6)) continue;
    let lineStart = gapBeforeStart - 6;
    while (lineStart > 0 && (source[lineStart - 1] === ' ' || source[lineStart - 1] === '\t')) lineStart--;
    if (lineStart > 0 && source[lineStart - 1] !== '\n') continue;
    const gapAfter = source.slice(after, gapAfterEnd);
    const newlines = countNewlines(gapBefore) + countNewlines(gapAfter);
    // The blanks after `default` must have room for the line breaks moved into them.
    if (gapAfter.length < newlines) continue;
    rewrite.replace(gapBeforeStart, at, ' '.repeat(gapBefore.length));
    rewrite.replace(after, gapAfterEnd, '\n'.repeat(newlines) + ' '.repeat(gapAfter.length - newlines));
  }
  return rewrite.text();
}

/** Same-length replacements in increasing order, joined once (a file can hold thousands). */
class Rewrite {
  private readonly parts: string[] = [];
  private copied = 0;

  constructor(private readonly source: string) {}

  replace(start: number, end: number, replacement: string): void {
    this.parts.push(this.source.slice(this.copied, start), replacement);
    this.copied = end;
  }

  text(): string {
    if (this.parts.length === 0) return this.source;
    return this.parts.join('') + this.source.slice(this.copied);
  }
}

function countNewlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** `export default abstract class {` (or `<`, `extends`, `implements`) → `export default          class {`. */
function unabstractDefaultClasses(source: string): string {
  const rewrite = new Rewrite(source);
  for (let at = source.indexOf('abstract'); at >= 0; at = source.indexOf('abstract', at + 8)) {
    ANONYMOUS_ABSTRACT_CLASS.lastIndex = at;
    if (!ANONYMOUS_ABSTRACT_CLASS.test(source) || !followsKeywords(source, at, ['default', 'export'])) continue;
    rewrite.replace(at, at + 8, ' '.repeat(8));
  }
  return rewrite.text();
}

/** `abstract class` then what only an anonymous class has next. */
const ANONYMOUS_ABSTRACT_CLASS = /abstract\s+class(?:\s*[{<]|\s+(?:extends|implements)\b)/y;

/** Whether the words before `at`, nearest first, are `keywords`, separated by blanks (and at least one before `at`). */
function followsKeywords(source: string, at: number, keywords: string[]): boolean {
  let end = at;
  for (const keyword of keywords) {
    const blanksEnd = end;
    while (end > 0 && isBlank(source.charCodeAt(end - 1))) end--;
    if (end === blanksEnd || !source.startsWith(keyword, end - keyword.length)) return false;
    end -= keyword.length;
  }
  return end === 0 || !isWordCode(source.charCodeAt(end - 1));
}

/**
 * `class`, `struct` or `union`, then upper-case macro words (group 1), then the name and what
 * only a class head has next: `{`, a base clause `:` (not `::`), or `final`.
 */
const MACRO_CLASS_HEAD = /\b(?:class|struct|union)\s+((?:[A-Z][A-Z0-9_]*\s+)+)[A-Za-z_]\w*\s*(?:\{|:(?!:)|final\b)/g;

/** `class V8_EXPORT Isolate {` → `class           Isolate {` (line breaks among the words kept). */
function unmacroClassHeads(source: string): string {
  const rewrite = new Rewrite(source);
  MACRO_CLASS_HEAD.lastIndex = 0;
  for (let match = MACRO_CLASS_HEAD.exec(source); match; match = MACRO_CLASS_HEAD.exec(source)) {
    const macros = match[1]!;
    const start = match.index + match[0].indexOf(macros);
    rewrite.replace(start, start + macros.length, macros.replace(/[A-Z0-9_]/g, ' '));
  }
  return rewrite.text();
}
