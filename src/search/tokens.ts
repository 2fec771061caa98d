/**
 * Code-aware tokens for the lexical and symbol channels of search (search.ts, the stores).
 *
 * An identifier counts whole (lower-cased, inner underscores kept: `read_status` for `_read_status`, `readuntil`) and
 * split on case changes, digits and underscores (`read`, `status`); a chunk's text is cut into
 * five fields the lexical ranking weighs differently: its own name (and its parts), the names of
 * what encloses it (a method's class), its doc
 * (docstrings and comments), its path (directory and file name segments) and its body (every
 * identifier in the code). The same function turns a query into terms, so `readUntil`,
 * `read_until` and "read until" meet the same tokens.
 *
 * The symbol channel looks a definition up by name: `symbolTerms` lists the lower-cased dotted
 * suffixes of its qualified name, module path included (`urllib.parse.urlencode`,
 * `parse.urlencode`, `urlencode`), so an identifier query, bare or qualified, finds it exactly.
 */
import type { CodeChunk } from '../code/chunk.js';
import { fnv1a, isAscii, splitIdentifier } from './hashed-embedder.js';
import { GenerationalMemo } from './memo.js';

/** Words in most sentences that carry no meaning of their own: never a term. */
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be by do else for from if in is it its not of on or that the this to when while with ' +
    'another one onto into than then there these those which what how why where who whose can could should would ' +
    'may might must will shall has have had was were been being does did also just only very such about'
  ).split(' '),
);

/**
 * Keywords of the common languages: in every chunk's code, where they are noise and only make the
 * index larger, so not terms of the code (body); but words of a name, a comment or a question
 * (`Option.default`, "set a default value", "import a module"), where they are terms.
 */
const KEYWORDS: ReadonlySet<string> = new Set(
  (
    'async await break case catch class const continue def default ' +
    'elif end enum export extends false fn func function ' +
    'go impl import interface let mut new nil none null package pass ' +
    'private pub public return self static struct super ' +
    'switch throw true try type use var void yield'
  ).split(' '),
);

const IDENTIFIER = /[\p{L}_$][\p{L}\p{N}_$]*/gu;
/** IDENTIFIER for ASCII text (hashed-embedder.ts isAscii says why). */
const ASCII_IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;

/** Whether a word is one that carries no meaning of its own (a, the, of, …). */
export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/**
 * Lower-cased tokens of `text`: each identifier whole (when it has parts) and its parts; stopwords
 * dropped, and with `code`, the languages' keywords too.
 */
export function codeTokens(text: string, code = false): string[] {
  const tokens: string[] = [];
  for (const match of text.matchAll(isAscii(text) ? ASCII_IDENTIFIER : IDENTIFIER)) {
    for (const token of identifierTokens(match[0])) if (!code || !KEYWORDS.has(token)) tokens.push(token);
  }
  return tokens;
}

/**
 * The tokens of one identifier, memoised: code repeats its identifiers, and splitting them is
 * most of tokenizing. Bounded (memo.ts): it lives as long as the process.
 */
const memo = new GenerationalMemo<readonly string[]>(5_000);

function identifierTokens(raw: string): readonly string[] {
  const known = memo.get(raw);
  if (known) return known;
  // The memo outlives the chunk `raw` was matched in: it must not keep that chunk's file alive.
  const key = detached(raw);
  const identifier = key.replace(/\$/g, '');
  // `_read_status` and `__init__` are `read_status` and `init` whole: the underscores around a
  // name say it is private or special, not what it is called.
  const whole = identifier.replace(/^_+|_+$/g, '').toLowerCase();
  const parts = splitIdentifier(identifier);
  const tokens: string[] = [];
  if (whole.length > 1 && !STOPWORDS.has(whole) && (parts.length !== 1 || parts[0] !== whole)) tokens.push(whole);
  for (const part of parts) if (!STOPWORDS.has(part)) tokens.push(part);
  memo.set(key, tokens);
  return tokens;
}

/**
 * A copy of `text` that shares no memory with the string it was cut from. V8 keeps a substring of
 * 13 characters or more (a regex match, a slice) as a view into its parent, so holding the
 * substring holds the parent: identifiers matched in chunk texts and memoised as they were kept
 * the whole source of nearly every file of a run alive (22 MB of heap on the Python standard
 * library, and after the run, in a server, for good). Concatenation then slicing makes V8 copy the
 * characters into a string of their own length.
 */
export function detached(text: string): string {
  return ` ${text}`.slice(1);
}

/** The distinct terms of a query, in order (at most `max`: a pasted function is still one query). */
export function queryTerms(query: string, max = 64): string[] {
  return [...new Set(codeTokens(query))].slice(0, max);
}

export interface LexicalFields {
  /** The definition's own name (`write` of `StreamWriter.write`); none for module code and windows. */
  name: string;
  /** The names of what encloses it (`StreamWriter`): a nested function is not named by its parent's words. */
  scope: string;
  doc: string;
  path: string;
  body: string;
}

/** The four fields a chunk is indexed under, each a space-separated token list. */
export function lexicalFields(chunk: Pick<CodeChunk, 'path' | 'symbol' | 'text'>): LexicalFields {
  const tokens = lexicalTokens(chunk);
  return {
    name: tokens.name.join(' '),
    scope: tokens.scope.join(' '),
    doc: tokens.doc.join(' '),
    path: tokens.path.join(' '),
    body: tokens.body.join(' '),
  };
}

/** The same fields as token arrays. */
export function lexicalTokens(
  chunk: Pick<CodeChunk, 'path' | 'symbol' | 'text'>,
): Record<keyof LexicalFields, string[]> {
  // `<module>`, `<lines 1-40>`: code with no name of its own.
  const segments = chunk.symbol.startsWith('<') ? [] : baseSymbol(chunk.symbol).split(/\.|::/);
  return {
    name: codeTokens(segments.at(-1) ?? ''),
    scope: codeTokens(segments.slice(0, -1).join(' ')),
    doc: codeTokens(docText(chunk.text)),
    path: codeTokens(chunk.path.replace(/\.[^./]+$/, '')),
    body: codeTokens(chunk.text, true),
  };
}

/** The words of a definition's own name and its parent's (`StreamWriter.write` → stream, writer, write), lower-cased.
 * */
export function splitName(symbol: string): string[] {
  return baseSymbol(symbol)
    .split(/\.|::/)
    .slice(-2)
    .flatMap((segment) => splitIdentifier(segment.replace(/\$/g, '')));
}

/** `Greeter.hello#part2` → `Greeter.hello`: the definition a fragment belongs to. */
export function baseSymbol(symbol: string): string {
  return symbol.replace(/#part\d+$/, '');
}

/** 0 for a whole chunk, N for `#partN` of a split definition. */
export function partNumber(symbol: string): number {
  const match = /#part(\d+)$/.exec(symbol);
  return match ? Number(match[1]) : 0;
}

/**
 * The module a file is, as code names it: `Lib/urllib/parse.py` → `lib.urllib.parse`,
 * `src/index.ts` → `src`, segments lower-cased. The path is taken from the indexed tree's own
 * directory (`treeName`), so indexing `…/urllib` alone still makes `parse.py` the module
 * `urllib.parse`, and its `__init__.py` the package `urllib`. Every suffix of it also qualifies a
 * symbol (see symbolTerms), so a query need not know where the tree starts.
 */
function moduleSegments(path: string, treeName = ''): string[] {
  const segments = `${treeName}/${path}`
    .replace(/\.[^./]+$/, '')
    .split('/')
    .filter((segment) => segment !== '');
  if (segments.length > 1 && /^(index|__init__|mod|lib|main)$/.test(segments.at(-1)!)) segments.pop();
  return segments.map((segment) => segment.toLowerCase());
}

/**
 * The names a definition answers to, lower-cased: its own name, every dotted suffix of its
 * qualified name (`Type::method` and `Type.method` alike), and those prefixed by the suffixes of
 * its module path. Module-level code and line windows answer to none.
 */
export function symbolTerms(chunk: Pick<CodeChunk, 'path' | 'symbol' | 'kind'>, treeName = ''): string[] {
  if (chunk.kind === 'toplevel' || chunk.kind === 'window') return [];
  const parts = baseSymbol(chunk.symbol)
    .toLowerCase()
    .split(/\.|::|#/)
    .filter((part) => part !== '');
  if (parts.length === 0) return [];
  const terms = new Set<string>();
  for (let i = 0; i < parts.length; i++) terms.add(parts.slice(i).join('.'));
  const qualified = parts.join('.');
  const module = moduleSegments(chunk.path, treeName);
  for (let i = 0; i < module.length; i++) terms.add(`${module.slice(i).join('.')}.${qualified}`);
  return [...terms];
}

/** A query that names a definition: one identifier, maybe qualified (`a.b`, `A::b`, `M:m`, `a/b.c`), dotted. */
export function symbolQueryText(query: string): string | undefined {
  const trimmed = query.trim();
  // Qualifiers as languages write them: `a.b`, `A::b` (C++, Rust, Ruby), `a/b`, `A#b`, and Lua's `M:method`.
  const name = isAscii(trimmed)
    ? /^[A-Za-z_$][A-Za-z0-9_$]*((\.|::?|\/|#)[A-Za-z_$][A-Za-z0-9_$]*)*(\(\))?$/
    : /^[\p{L}_$][\p{L}\p{N}_$]*((\.|::?|\/|#)[\p{L}_$][\p{L}\p{N}_$]*)*(\(\))?$/u;
  if (!name.test(trimmed)) return undefined;
  return trimmed.replace(/\(\)$/, '').replace(/::?|\/|#/g, '.');
}

/** symbolQueryText lower-cased: what symbolTerms are compared with. */
export function symbolQuery(query: string): string | undefined {
  return symbolQueryText(query)?.toLowerCase();
}

/** Docstrings and comments of a chunk: what explains it in words. */
export function docText(text: string): string {
  const pieces: string[] = [];
  for (const match of text.matchAll(
    /"""([\s\S]*?)"""|'''([\s\S]*?)'''|\/\*([\s\S]*?)\*\/|(?:^|[ \t])(?:#|\/\/)(.*)$/gm,
  )) {
    pieces.push(match[1] ?? match[2] ?? match[3] ?? match[4] ?? '');
  }
  return pieces.join('\n');
}

/**
 * Whether a function chunk has no code of its own: an abstract method, an overload or interface
 * signature, `pass`/`...`/`raise NotImplementedError` under a docstring. A body of any other form
 * is code: an expression (`(a) => a * 2`, `fun f() = 1`), `… end`, an empty block. Such stubs rank after
 * real definitions of the same name. A fragment of a split definition is never one: the first
 * fragment of a long function can be its signature alone (`def dumps(…):` over three lines),
 * which looks empty but is where the definition starts.
 */
export function isStub(chunk: Pick<CodeChunk, 'kind' | 'text' | 'language' | 'symbol'>): boolean {
  if (chunk.kind !== 'function' && chunk.kind !== 'method') return false;
  if (partNumber(chunk.symbol) > 0) return false;
  const text = chunk.text;
  if (chunk.language === 'python') {
    const code = text
      .replace(/"""[\s\S]*?"""|'''[\s\S]*?'''/g, '')
      .replace(/#.*$/gm, '')
      .replace(/^\s*@.*$/gm, '');
    const signature = /\bdef\s[\s\S]*?\)\s*(?:->[^:]*)?:([\s\S]*)$/.exec(code);
    if (!signature) return false;
    const rest = signature[1]!.trim();
    return /^(\.\.\.|pass|raise NotImplementedError(\(.*\))?|return NotImplemented)?$/.test(rest);
  }
  // Lua, Ruby, Elixir and shell declare no function without its body (`… end`, `do … end`).
  if (NO_DECLARATIONS.has(chunk.language)) return false;
  // Braced languages: a block, even an empty one (`fun later() { }`, a no-op), is a body; no block
  // at all is a declaration, unless the body is an expression (`(a) => a * 2`, `fun f() = 1`).
  const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '').trim();
  if (code.includes('{')) return false;
  const expression = EXPRESSION_BODY[chunk.language];
  return expression === undefined || !expression.test(outsideGroups(code));
}

/** Languages whose grammars capture no function without its body. */
const NO_DECLARATIONS: ReadonlySet<string> = new Set(['lua', 'ruby', 'elixir', 'bash']);

/** A binding `=` (not `==`, `=>`, `<=`, `>=`, `!=`): `const f = (a) => a`, Kotlin's and Scala's `fun f() = 1`. */
const BINDING = /(?<![=!<>])=(?![=>])/;
/**
 * What shows an expression body outside parentheses and angle brackets (outsideGroups), by
 * language; a declaration shows neither, as a parameter's default (`a: Int = 1`) is inside the
 * parentheses. C++'s `= 0` and `= delete` are declarations, so it has none.
 */
const EXPRESSION_BODY: Readonly<Record<string, RegExp>> = {
  javascript: BINDING,
  typescript: BINDING,
  tsx: BINDING,
  php: BINDING,
  kotlin: BINDING,
  scala: BINDING,
  csharp: /=>/,
};

/** `code` without its balanced `(…)` and `<…>` groups (parameters, type arguments), innermost first. */
function outsideGroups(code: string): string {
  let previous: string;
  let rest = code;
  do {
    previous = rest;
    rest = rest.replace(/\([^()]*\)|<[^<>()]*>/g, '');
  } while (rest !== previous);
  return rest;
}

/**
 * Whether a definition is internal to its module: a Python name with one leading underscore, a
 * JavaScript or TypeScript function not exported or a member marked private (`private`, `#x`,
 * `_x`), a Go function or type whose name starts lower-case.
 */
export function isInternal(chunk: Pick<CodeChunk, 'symbol' | 'language' | 'kind' | 'text'>): boolean {
  if (chunk.kind === 'toplevel' || chunk.kind === 'window') return false;
  const segments = baseSymbol(chunk.symbol).split(/\.|::/);
  const own = segments.at(-1)!;
  switch (chunk.language) {
    case 'python':
      return /^_(?!_)/.test(own);
    case 'javascript':
    case 'typescript':
    case 'tsx':
      if (
        /^[#_]/.test(own) ||
        /^\s*(?:\/\*[\s\S]*?\*\/\s*|\/\/[^\n]*\n\s*|@\w[^\n]*\n\s*)*(?:public\s+|protected\s+)?private\b/.test(
          chunk.text,
        )
      )
        return true;
      return (
        segments.length === 1 &&
        chunk.kind === 'function' &&
        !/^\s*(?:\/\*[\s\S]*?\*\/\s*|\/\/[^\n]*\n\s*)*export\b/.test(chunk.text)
      );
    case 'go':
      return /^[a-z]/.test(own);
    default:
      return false;
  }
}

/** A chunk's ranking traits read from its text, as bits (chunkTraits): an empty stub (isStub). */
export const STUB_TRAIT = 1;
/** An internal definition (isInternal). */
export const INTERNAL_TRAIT = 2;

/**
 * What ranking needs to know of a chunk's text, worked out once when it is indexed: the local
 * store keeps it in the chunk's row (sqlite-store.ts `traits`), so a search ranks its candidates
 * without reading their text; a store that keeps none works it out from the text it reads.
 */
export function chunkTraits(chunk: Pick<CodeChunk, 'kind' | 'text' | 'language' | 'symbol'>): number {
  return (isStub(chunk) ? STUB_TRAIT : 0) | (isInternal(chunk) ? INTERNAL_TRAIT : 0);
}

/**
 * Whether a path is test code: a `test`/`tests`/`__tests__`/`spec` directory (or one ending in
 * `_test`/`_tests`), or a test file by the usual names (`test_x.py`, `x_test.go`, `x.test.ts`,
 * `x.spec.js`). Tests call and re-define the names they test; they rank after the code itself.
 */
export function isTestPath(path: string): boolean {
  const segments = path.toLowerCase().split('/');
  const file = segments.pop() ?? '';
  if (segments.some((segment) => /^(tests?|testing|__tests__|specs?|[\w-]*_tests?)$/.test(segment))) return true;
  return /^test_.*\.py$|_tests?\.[a-z]+$|\.(test|spec)\.[a-z]+$|^tests?\.py$/.test(file);
}

/** Field weights of the sparse vector (Qdrant's lexical channel), as bm25() weighs the FTS5 columns. */
const SPARSE_FIELD_WEIGHTS: Readonly<Record<keyof LexicalFields, number>> = {
  name: 8,
  scope: 4,
  doc: 3,
  path: 2,
  body: 1,
};
/** BM25's k1: how soon more occurrences of a term stop counting. */
const SPARSE_K1 = 1.2;

export interface SparseVector {
  indices: number[];
  values: number[];
}

/**
 * A chunk's lexical fields as a sparse vector for Qdrant: each token hashed (FNV-1a) to a 32-bit
 * index (Qdrant's sparse indices are u32), its value the field-weighted occurrences, saturated as BM25 does
 * (tf·(k1+1)/(tf+k1)). Qdrant's IDF
 * modifier supplies the inverse document frequency at query time, over the whole collection.
 */
export function sparseDocument(fields: LexicalFields): SparseVector {
  const weighted = new Map<number, number>();
  for (const field of Object.keys(SPARSE_FIELD_WEIGHTS) as Array<keyof LexicalFields>) {
    for (const token of fields[field].split(' ')) {
      if (token === '') continue;
      const index = fnv1a(token);
      weighted.set(index, (weighted.get(index) ?? 0) + SPARSE_FIELD_WEIGHTS[field]);
    }
  }
  return sparseFrom(weighted, (tf) => (tf * (SPARSE_K1 + 1)) / (tf + SPARSE_K1));
}

/** A query's terms as a sparse vector: each term once, weight 1. */
export function sparseQuery(terms: readonly string[]): SparseVector {
  return sparseFrom(new Map(terms.map((term) => [fnv1a(term), 1])), (value) => value);
}

function sparseFrom(weights: ReadonlyMap<number, number>, value: (weight: number) => number): SparseVector {
  const indices = [...weights.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((index) => value(weights.get(index)!)) };
}
