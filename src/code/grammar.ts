/**
 * Loads tree-sitter grammars and parses source text.
 *
 * The web-tree-sitter runtime is initialised once per process, on first use. Each grammar (its
 * wasm, a Parser set to it and its compiled definitions query) is loaded on first use of its
 * language and then kept for the life of the process: that is a fixed, bounded cost per language,
 * while re-compiling the query on every call would cost milliseconds each time. Trees are the
 * per-call allocation that grows: `withTree` deletes them (leaving them to the wasm heap grew RSS
 * to 400 MB over 200 parses of a 2,000-line file), except the latest tree of a named document,
 * which RecentTrees keeps, bounded, so the document's next version is re-parsed incrementally.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Edit, Language, LANGUAGE_VERSION, MIN_COMPATIBLE_VERSION, Parser, Query, type Tree } from 'web-tree-sitter';
import { CancelledError } from '../kernel/errors.js';
import { grammarsDirectory } from './grammar-files.js';
import type { LanguageInfo } from './languages.js';
import { deleteSoon, RecentTrees } from './recent-trees.js';
import { textToParse } from './parse-text.js';
import { editBetween } from './source-edit.js';

export interface Grammar {
  readonly language: Language;
  readonly parser: Parser;
  readonly definitionsQuery: Query;
}

let runtimeReady: Promise<void> | undefined;
/**
 * The runtime's Emscripten module: Parser.init fills the object it is given with the module's exports, and
 * readyHeap() needs its allocator and memory.
 */
interface RuntimeModule {
  _malloc?: (bytes: number) => number;
  _free?: (address: number) => void;
  HEAPU8?: Uint8Array;
}
const runtime: RuntimeModule = {};
const grammars = new Map<string, Promise<Grammar>>();

const PARSE_READ_CHARS = 10 * 1024;

/** Languages sharing a grammar file (none today, but JS/JSX-like pairs could) share its key. */
function grammarKey(info: LanguageInfo): string {
  return `${info.grammarDir}/${info.wasmFile}`;
}

/** The grammar for a language, loaded on first use (concurrent callers share one load). */
export function loadGrammar(info: LanguageInfo): Promise<Grammar> {
  const key = grammarKey(info);
  let loading = grammars.get(key);
  if (!loading) {
    loading = load(info);
    // A failed load is not cached, so a later call reports the error again instead of a stale one.
    loading.catch(() => grammars.delete(key));
    grammars.set(key, loading);
  }
  return loading;
}

async function load(info: LanguageInfo): Promise<Grammar> {
  await readyRuntime();
  const dir = join(grammarsDirectory, info.grammarDir);
  const language = await Language.load(new Uint8Array(readFileSync(join(dir, info.wasmFile))));
  if (language.abiVersion < MIN_COMPATIBLE_VERSION || language.abiVersion > LANGUAGE_VERSION) {
    throw new Error(
      `grammar ${info.wasmFile} has ABI ${language.abiVersion}; ` +
        `web-tree-sitter accepts ${MIN_COMPATIBLE_VERSION}..${LANGUAGE_VERSION}`,
    );
  }
  const definitionsQuery = new Query(language, readFileSync(join(dir, 'definitions.scm'), 'utf8'));
  const parser = new Parser();
  parser.setLanguage(language);
  return { language, parser, definitionsQuery };
}

function readyRuntime(): Promise<void> {
  runtimeReady ??= Parser.init(runtime as Parameters<typeof Parser.init>[0]);
  return runtimeReady;
}

/** A page of memory as the kernel maps it: the unit of a first touch. */
const PAGE_BYTES = 4096;

/**
 * Makes `bytes` of tree-sitter's WebAssembly heap resident now (allocated, each page written, freed), so that the
 * next parse that needs them finds them mapped. Only the pages of [`from`, `to`) of the block are written, so a
 * caller can ready it in steps, each step allocating the whole block again and writing only its own part: a step
 * touches its part and no more, even when something kept meanwhile (a tree) moved the block elsewhere. WebAssembly memory is reserved, not backed: its first parse of a
 * large source touches fresh pages (jquery.js, 10,907 lines: ~1,100 page faults above the warm-up's, ≈ 40 ms on the
 * VM the benches run on). Freed, the block goes back to the runtime's allocator, and WebAssembly memory never
 * shrinks, so the pages stay resident for the parses that follow: `bytes` of RSS. Only for a thread with idle time
 * (the listing thread, after its warm-up): on a call's path it would cost what it saves. Each page is written with
 * the byte it holds, so nothing in use changes (no other code runs on this thread's heap meanwhile). Best effort:
 * an allocation that fails does nothing.
 */
export async function readyHeap(bytes: number, from = 0, to = bytes): Promise<void> {
  await readyRuntime();
  const address = runtime._malloc?.(bytes) ?? 0;
  if (address === 0) return;
  try {
    // Read after the allocation: a heap that grew for it has a new buffer.
    const heap = runtime.HEAPU8!;
    const end = address + Math.min(to, bytes);
    for (let at = address + Math.max(0, from); at < end; at += PAGE_BYTES) heap[at] = heap[at]!;
  } finally {
    runtime._free!(address);
  }
}

const recentTrees = new RecentTrees();

/**
 * Parses `source` and runs `use` on the tree. With `document` (a file's path), the tree of that
 * document's previous version, if kept, is edited and re-parsed incrementally, and this tree is
 * kept in its place; without it the tree is deleted afterwards, whatever happens (on the next turn
 * of the event loop: recent-trees.ts's deleteSoon). The parser reads
 * textToParse's text (parse-text.ts): the source, or a rewrite of it with the same offsets and
 * rows, so the tree fits the source. `cancelled`, asked while tree-sitter parses, stops the parse
 * when it answers true (a CancelledError).
 */
export async function withTree<T>(
  source: string,
  info: LanguageInfo,
  use: (tree: Tree, grammar: Grammar) => T,
  document?: string,
  cancelled?: () => boolean,
): Promise<T> {
  const grammar = await loadGrammar(info);
  const key = grammarKey(info);
  const previous = document === undefined ? undefined : recentTrees.take(document, key);
  // What the parser reads: the source, or the same-length rewrite of a shape the grammar misreads.
  const parsed = textToParse(source, info.name);
  if (previous) previous.tree.edit(new Edit(editBetween(previous.source, parsed)));
  let tree: Tree | null;
  try {
    // web-tree-sitter reads its input through a callback in pieces of at most 10K UTF-16 units; a
    // plain string is sliced from the offset to the end on every read, a bounded slice is ~25% faster.
    tree = grammar.parser.parse(
      (offset) => parsed.slice(offset, offset + PARSE_READ_CHARS),
      previous?.tree,
      // tree-sitter stops the parse when the callback answers true (its typing says void).
      cancelled && { progressCallback: cancelled as () => void },
    );
  } finally {
    if (previous) deleteSoon(previous.tree);
  }
  // A parse stopped by its callback resumes on the parser's next call unless it is reset: the next
  // source would be read as the rest of this one (names sliced at this one's offsets).
  if (!tree) grammar.parser.reset();
  if (!tree && cancelled?.()) throw new CancelledError();
  if (!tree) throw new Error(`tree-sitter returned no tree for ${info.displayName} source`);
  try {
    return use(tree, grammar);
  } finally {
    if (document === undefined) deleteSoon(tree);
    else recentTrees.keep(document, { grammarKey: key, source: parsed, tree });
  }
}

/** How many document trees are kept for incremental re-parsing (for tests). */
export function keptTreeCount(): number {
  return recentTrees.size;
}
