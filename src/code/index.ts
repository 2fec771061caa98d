/**
 * Code reading with tree-sitter: which definitions a source file has, and the text of one.
 *
 * Public API (source text is passed in; reading files is src/access.ts's job):
 *
 * - `languageForPath(path, source?)` → `LanguageInfo | undefined` by extension (case-insensitive;
 *   a `.h` header whose `source` shows C++ is C++, else C: src/code/header-language.ts);
 *   `languageByName('python' | 'ts' | 'c++' | …)`; `supportedLanguages()`;
 *   `supportedExtensions()`; `requireLanguageForPath(path, source?)` throws UnsupportedLanguageError
 *   (an InputError listing the supported extensions).
 * - `listDefinitions(source, language, { document?, store? })` → `{ language, definitions, syntaxErrors }`.
 *   `document` names what the source is a version of (a file's path): the tree of its previous
 *   version is then re-parsed incrementally (src/code/recent-trees.ts); `store`, a DefinitionStore
 *   (src/code/definition-store.ts), answers a source any process listed before from disk and keeps
 *   what is parsed. The answer is the same either way. Once a long-lived host started the listing
 *   thread (`startListingThread()`, src/code/listing-thread.ts), sources are parsed there, warm,
 *   and `signal` cancels such a parse.
 *   `definitions` are in source order (by start of the definition itself, so an outer function
 *   comes before the functions nested in it). Each has `name`, `qualifiedName` (`Class.method`,
 *   Go `Receiver.Method`, Rust/C++/PHP `Type::method`, nested `outer.inner`), `kind`
 *   (`function | method | constructor` — see `isFunctionKind` — or `class | interface | struct |
 *   enum | trait | module`), 1-based inclusive `startLine`/`endLine`, `startOffset`/`endOffset`
 *   (UTF-16 offsets: `source.slice(startOffset, endOffset)` is the full text, with decorators,
 *   annotations, Rust attributes and doc comments, `export`, TS overload signatures) and
 *   `body: SourceSpan | null` (the block alone, from the start of its first line so indentation
 *   is kept; null for declarations without one). `syntaxErrors` is `{ count, firstLines }`: with
 *   errors, the definitions are those tree-sitter could still recognise. Definitions nested in
 *   more than MAX_NESTING (64) others or deeper than MAX_TREE_DEPTH (400) tree levels are left out.
 * - `listFunctions(source, language, { document?, store? })` → the same, with function-like definitions only.
 * - `extractFunction(source, language, func, { document?, store? })` → `{ name, qualifiedName, kind, language, full,
 * body,
 *   startLine, endLine, syntaxErrors }`. `func` is a bare name (`m`), a qualified name or a
 *   qualified suffix (`A.m`, `Type::m`; `.`, `::` and Lua's `:` are interchangeable; a computed key `[k]` is a
 *   segment of its own, `C[Symbol.iterator]` or `[Symbol.iterator]`), optionally with
 *   `:LINE` (`A.m:42`, the definition's first line) to pick one of several same-named overloads.
 *   Throws FunctionNotFoundError (`.available`, the function names that exist) or
 *   AmbiguousFunctionError (`.candidates`, qualified names with lines); both are ToolInputErrors,
 *   as is the error for a `:LINE` where none of the matching definitions starts (it names theirs).
 * - `countSyntaxErrors(source, language)` → `{ count, firstLines }` (ERROR and MISSING nodes).
 *
 * - `warmUpCode(languages = ['typescript'], { beforeStep })` → loads those grammars and queries and lists a
 *   generated sample, in small steps, so a later first call does not pay for compiling them (the
 *   listing thread runs it at its start; beforeStep is awaited before each step, to
 *   put steps off while the host measures; src/code/warm-up.ts). Never rejects.
 *
 * `language` is a LanguageInfo or a name accepted by languageByName. The tree-sitter runtime is
 * imported, and each grammar loaded, on the first parse that needs it; calls are async for that.
 */
import { InputError } from '../kernel/errors.js';
import type { CallArgument, CallReport, CallSite, EnvRead } from './calls.js';
import { DefinitionCache } from './definition-cache.js';
import type { DefinitionStore } from './definition-store.js';
import { isFunctionKind, type Definition, type FunctionKind } from './definitions.js';
import { languageForSource } from './header-language.js';
import { listingThread, type ListingThread } from './listing-thread.js';
import {
  languageByName,
  languageForPath as languageForExtension,
  supportedExtensions,
  supportedLanguages,
  type LanguageInfo,
} from './languages.js';
import type { SyntaxErrorSummary } from './syntax-errors.js';
import type { WarmUpOptions } from './warm-up.js';

export { languageByName, supportedExtensions, supportedLanguages, isFunctionKind };

/**
 * The language of a file, by its extension (case-insensitive); undefined when unsupported. A `.h`
 * header is C unless `source`, its text, shows C++ (src/code/header-language.ts): pass the text
 * whenever it is at hand.
 */
export function languageForPath(path: string, source?: string): LanguageInfo | undefined {
  return source === undefined ? languageForExtension(path) : languageForSource(path, source);
}
export type { LanguageInfo, Definition, SyntaxErrorSummary };
export type { DefinitionKind, FunctionKind, TypeKind, SourceSpan } from './definitions.js';

export interface DefinitionList {
  language: string;
  definitions: Definition[];
  syntaxErrors: SyntaxErrorSummary;
}

/** A definition whose kind is function-like. */
export type FunctionDefinition = Definition & { kind: FunctionKind };

export interface FunctionList extends DefinitionList {
  definitions: FunctionDefinition[];
}

export interface ExtractedFunction {
  name: string;
  qualifiedName: string;
  kind: FunctionKind;
  language: string;
  /** The whole definition as written, with decorators/annotations/attributes/export. */
  full: string;
  /** The block only, with its original indentation; null when the declaration has none. */
  body: string | null;
  startLine: number;
  endLine: number;
  syntaxErrors: SyntaxErrorSummary;
}

/** How many names a not-found error lists before saying how many more there are. */
export const MAX_LISTED_NAMES = 50;

export class UnsupportedLanguageError extends InputError {}

export class FunctionNotFoundError extends InputError {
  constructor(
    readonly func: string,
    /** Qualified names of every function in the file (the message lists up to MAX_LISTED_NAMES). */
    readonly available: string[],
  ) {
    super(
      available.length === 0
        ? `func: no function named '${echoedName(func)}' (the file defines no functions)`
        : `func: no function named '${echoedName(func)}'; the file defines: ${capList(available)}`,
    );
  }
}

export class AmbiguousFunctionError extends InputError {
  constructor(
    readonly func: string,
    /** `qualifiedName (lines a-b)` for each match. */
    readonly candidates: string[],
    /** The `:LINE` the request already carried: then a line cannot tell them apart. */
    line?: number,
  ) {
    super(
      `func: '${echoedName(func)}' matches ${candidates.length} definitions: ${candidates.join(', ')}. ` +
        (line === undefined
          ? `Pass a qualified name, or add ':LINE' with the first line to pick one (e.g. '${echoedName(func)}:LINE')`
          : `They all start at line ${line}, so ':LINE' cannot tell them apart; put them on separate lines`),
    );
  }
}

/**
 * The language of a file, or an UnsupportedLanguageError naming the supported extensions. With
 * `source`, the file's text, a `.h` header showing C++ is C++ (see languageForPath).
 */
export function requireLanguageForPath(path: string, source?: string): LanguageInfo {
  const info = languageForPath(path, source);
  if (info) return info;
  throw new UnsupportedLanguageError(
    `file: ${path} has no supported extension; supported: ${supportedExtensions().join(' ')}`,
  );
}

function resolveLanguage(language: LanguageInfo | string): LanguageInfo {
  if (typeof language !== 'string') return language;
  const info = languageByName(language);
  if (info) return info;
  throw new UnsupportedLanguageError(
    `language: '${language}' is not supported; supported: ${supportedLanguages()
      .map((entry) => entry.name)
      .join(', ')}`,
  );
}

const recentlyParsed = new DefinitionCache<DefinitionList>();

/**
 * The tree-sitter side (runtime, grammars, parsing), imported on the first parse: a process whose
 * calls the definition store answers never loads it.
 */
const loadParsing = () =>
  Promise.all([import('./grammar.js'), import('./definitions.js'), import('./syntax-errors.js')]);

export interface ParseOptions {
  /**
   * The document this source is a version of (a file's path). Its tree is kept, bounded, so the
   * next version of the same document is re-parsed incrementally; the result is the same.
   */
  document?: string;
  /**
   * Definitions listed before by any process using the same directory (src/code/definition-store.ts):
   * a source found there is answered without parsing, one parsed is written there. The answer is
   * the same either way.
   */
  store?: DefinitionStore;
  /** Stops a parse on the listing thread (src/code/listing-thread.ts) with a CancelledError; one here runs to its end. */
  signal?: AbortSignal;
  /**
   * The bytes `source` was decoded from (access.ts sourceText()), when at hand: the listing thread is handed these
   * through shared memory and decodes them itself, rather than being sent a copy of the text.
   */
  bytes?: Uint8Array;
}

export async function listDefinitions(
  source: string,
  language: LanguageInfo | string,
  options: ParseOptions = {},
): Promise<DefinitionList> {
  const info = resolveLanguage(language);
  const list = await recentlyParsed.get(info.name, source, async () => {
    const thread = listingThread();
    if (!thread) {
      const stored = await options.store?.get(info, source);
      if (stored) return { language: info.name, ...stored };
      const parsed = await parseDefinitions(source, info, options.document);
      void options.store?.put(info, source, parsed);
      return parsed;
    }
    return listOnThread(thread, source, info, options);
  });
  // A copy of the arrays, so a caller that filters or sorts cannot change the cached list.
  return { ...list, definitions: [...list.definitions] };
}

/**
 * Lists on the listing thread, which writes the store itself once it has answered, off this
 * thread's event loop. The thread starts parsing while the store is read (hashing the source and
 * a file lookup: most of a millisecond and a round trip through libuv's pool, on a warm call's
 * path otherwise); a source found there cancels the parse, which then stops inside tree-sitter.
 */
async function listOnThread(
  thread: ListingThread,
  source: string,
  info: LanguageInfo,
  options: ParseOptions,
): Promise<DefinitionList> {
  const portable = options.store?.portable();
  const stop = new AbortController();
  const stopWith = (): void => stop.abort();
  options.signal?.addEventListener('abort', stopWith, { once: true });
  try {
    if (options.signal?.aborted) stop.abort();
    const parsing = thread.list(source, info.name, options.document, stop.signal, portable, options.bytes);
    // Its rejection is handled below, or dropped once the store has answered.
    parsing.catch(() => {});
    const stored = await options.store?.get(info, source);
    if (stored) {
      stop.abort();
      return { language: info.name, ...stored };
    }
    const parsed = await parsing;
    if (options.store && !portable) void options.store.put(info, source, parsed);
    return parsed;
  } finally {
    options.signal?.removeEventListener('abort', stopWith);
  }
}

async function parseDefinitions(
  source: string,
  info: LanguageInfo,
  document: string | undefined,
): Promise<DefinitionList> {
  const [{ withTree }, { findDefinitions }, { summariseSyntaxErrors }] = await loadParsing();
  return withTree(
    source,
    info,
    (tree, grammar) => ({
      language: info.name,
      definitions: findDefinitions(tree, grammar, info, source),
      syntaxErrors: summariseSyntaxErrors(tree.rootNode),
    }),
    document,
  );
}

export async function listFunctions(
  source: string,
  language: LanguageInfo | string,
  options: ParseOptions = {},
): Promise<FunctionList> {
  const list = await listDefinitions(source, language, options);
  return { ...list, definitions: list.definitions.filter(isFunctionDefinition) };
}

export async function countSyntaxErrors(source: string, language: LanguageInfo | string): Promise<SyntaxErrorSummary> {
  const info = resolveLanguage(language);
  const [{ withTree }, , { summariseSyntaxErrors }] = await loadParsing();
  return withTree(source, info, (tree) => summariseSyntaxErrors(tree.rootNode));
}

export async function extractFunction(
  source: string,
  language: LanguageInfo | string,
  func: string,
  options: ParseOptions = {},
): Promise<ExtractedFunction> {
  const requested = func.trim();
  if (segments(requested.replace(/:\d+$/, '')).length === 0) {
    throw new InputError(
      `func: '${echoedName(requested)}' is not a function name; give one bare or qualified (e.g. run or Server.run)`,
    );
  }
  const list = await listFunctions(source, language, options);
  const definition = pickDefinition(list.definitions, requested);
  return {
    name: definition.name,
    qualifiedName: definition.qualifiedName,
    kind: definition.kind,
    language: list.language,
    full: source.slice(definition.startOffset, definition.endOffset),
    body: definition.body ? source.slice(definition.body.startOffset, definition.body.endOffset) : null,
    startLine: definition.startLine,
    endLine: definition.endLine,
    syntaxErrors: list.syntaxErrors,
  };
}

/**
 * Exact qualified name first, then a qualified suffix on segment boundaries (`B.m` finds
 * `A.B.m`), then the bare name. A trailing `:LINE` narrows to the definition starting there.
 */
function pickDefinition(functions: FunctionDefinition[], requested: string): FunctionDefinition {
  const lineMatch = /^(.*[^:]):(\d+)$/.exec(requested);
  const wanted = lineMatch?.[1] ?? requested;
  const line = lineMatch ? Number(lineMatch[2]) : undefined;
  const target = segments(wanted);
  const tiers = [
    (definition: FunctionDefinition) => sameSegments(segments(definition.qualifiedName), target),
    (definition: FunctionDefinition) => endsWithSegments(segments(definition.qualifiedName), target),
  ];
  let startLines: number[] = [];
  for (const matches of tiers) {
    let found = functions.filter(matches);
    if (line !== undefined) {
      if (startLines.length === 0) startLines = found.map((definition) => definition.startLine);
      found = found.filter((definition) => definition.startLine === line);
    }
    if (found.length === 1) return found[0]!;
    if (found.length > 1) {
      throw new AmbiguousFunctionError(
        requested,
        found.map((definition) => `${definition.qualifiedName} (lines ${definition.startLine}-${definition.endLine})`),
        line,
      );
    }
  }
  if (startLines.length > 0) {
    throw new InputError(
      `func: no '${echoedName(wanted)}' starts at line ${line}; it ` +
        `starts at line(s) ${startLines.join(', ')} (e.g. ` +
        `'${echoedName(wanted)}:${startLines[0]}')`,
    );
  }
  throw new FunctionNotFoundError(requested, [...new Set(functions.map((definition) => definition.qualifiedName))]);
}

function isFunctionDefinition(definition: Definition): definition is FunctionDefinition {
  return isFunctionKind(definition.kind);
}

/**
 * The segments of a qualified name: split at `.`, `::` and a single `:` (Lua's `M:method`, the name as
 * written where it is defined and called), except inside a computed member key,
 * which is a segment of its own (`C[Symbol.iterator]` → `C`, `[Symbol.iterator]`), so the key
 * listed as a name is accepted back alone. An empty `[]` stays with its segment (`operator[]`).
 */
function segments(name: string): string[] {
  const found: string[] = [];
  let current = '';
  let depth = 0;
  const push = (): void => {
    if (current.length > 0) found.push(current);
    current = '';
  };
  for (let index = 0; index < name.length; index++) {
    const char = name[index]!;
    if (depth > 0) {
      current += char;
      if (char === '[') depth++;
      else if (char === ']' && --depth === 0) push();
    } else if (char === '[' && name[index + 1] !== ']') {
      push();
      current = char;
      depth = 1;
    } else if (char === '.') push();
    else if (char === ':' && name[index + 1] === ':') {
      push();
      index++;
    } else if (char === ':') push();
    else current += char;
  }
  push();
  return found;
}

function sameSegments(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((segment, index) => segment === b[index]);
}

function endsWithSegments(name: string[], suffix: string[]): boolean {
  return (
    suffix.length <= name.length &&
    suffix.every((segment, index) => segment === name[name.length - suffix.length + index])
  );
}

/** Names echoed in errors are cut short: a 100 kB argument must not come back as a 100 kB message. */
const MAX_ECHOED_NAME_CHARS = 120;

function echoedName(name: string): string {
  return name.length > MAX_ECHOED_NAME_CHARS ? `${name.slice(0, MAX_ECHOED_NAME_CHARS)}…` : name;
}

function capList(names: string[]): string {
  const shown = names.slice(0, MAX_LISTED_NAMES).join(', ');
  return names.length > MAX_LISTED_NAMES ? `${shown} … and ${names.length - MAX_LISTED_NAMES} more` : shown;
}
export type { CallReport, CallSite, CallArgument, EnvRead };

/** The calls and environment reads of a source (src/code/calls.ts); tree-sitter is imported on first use. */
export async function listCalls(source: string, language: LanguageInfo | string): Promise<CallReport> {
  return (await import('./calls.js')).listCalls(source, language);
}

/** Readies grammars for a later first call (src/code/warm-up.ts); tree-sitter is imported on first use. */
export async function warmUpCode(languages?: readonly string[], options?: WarmUpOptions): Promise<void> {
  return (await import('./warm-up.js')).warmUpCode(languages, options);
}

export {
  DefinitionStore,
  definitionStoreIn,
  type DefinitionStoreOptions,
  type StoredDefinitions,
} from './definition-store.js';
export { startListingThread, stopListingThread, type ListingThread } from './listing-thread.js';
