/**
 * The listing thread's side (src/code/listing-thread.ts starts it): warms the grammars it was
 * given at once, then parses what the host sends, one request at a time, and answers each with
 * the definitions or an error. Its grammars, compiled queries, V8's compiled WebAssembly and the
 * documents' recent trees (incremental re-parse) live here for the thread's life.
 *
 * A request the host cancelled (its id written to the shared cancel cell) stops tree-sitter's
 * parse and query through their progress callbacks, so the thread is free for the next request.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { sourceText } from '../access.js';
import type { DefinitionStore } from './definition-store.js';
import type { DefinitionList } from './index.js';
import {
  packList,
  type ListingReply,
  type ListingRequest,
  type ListingThreadData,
  type ThreadStore,
} from './listing-thread.js';

const data = workerData as ListingThreadData;

/*
 * The thread keeps the host's priority. A niced thread (10) spared a loaded host's start-up, but
 * its requests then waited behind every other process: at load 14 five small listings took over
 * the 5 s a closing stdin allows (test/stdio-hardening). A thread that answers must not starve.
 */
const cancelCell = new Int32Array(data.cancel);
const holdCell = new Int32Array(data.hold);
/** How often a held warm-up looks again whether the host still measures. */
const HOLD_POLL_MS = 25;

/** Loaded once: the first import of the tree-sitter side is part of what the warm-up pays. */
const loading = Promise.all([
  import('./grammar.js'),
  import('./definitions.js'),
  import('./syntax-errors.js'),
  import('./languages.js'),
]);

/** Requests wait for the warm-up's step under way only: each step yields to the event loop. */
const queue: ListingRequest[] = [];
let busy = false;
/**
 * The draining of requests and the store writes under way. The warm-up takes its steps only when there are none: a
 * write is a chain of file-system steps, and with a warm-up step (up to a grammar's load) between each of them a
 * fresh server's first write was still under way when a client that had its answer closed the server (bench
 * `code.listing-first-call` at load 10: no entry written within 10 s).
 */
let working = 0;
/** Resolves when `working` falls to 0. */
let whenIdle: Promise<void> = Promise.resolve();
let becameIdle = (): void => {};

function begin(): void {
  if (working++ === 0) whenIdle = new Promise((resolve) => (becameIdle = resolve));
}

function end(): void {
  if (--working === 0) becameIdle();
}

parentPort!.on('message', (request: ListingRequest) => {
  queue.push(request);
  void drain();
});

async function drain(): Promise<void> {
  if (busy) return;
  busy = true;
  begin();
  try {
    for (let request = queue.shift(); request; request = queue.shift()) {
      const { reply, list, source } = await answer(request);
      parentPort!.postMessage(reply, reply.list ? [reply.list.numbers.buffer as ArrayBuffer] : []);
      // The host keeps this thread referenced until the write is over (-1), or its exit would cut it short.
      if (request.store) {
        begin();
        void (
          list && source !== undefined ? store(request.store, request.language, source, list) : Promise.resolve()
        ).finally(() => {
          end();
          parentPort!.postMessage({ id: -1 } satisfies ListingReply);
        });
      }
    }
  } finally {
    busy = false;
    end();
  }
}

const stores = new Map<string, DefinitionStore>();

/** Writes a listing to the host's definition store (never rejects: a store that cannot be written only misses). */
async function store(where: ThreadStore, language: string, source: string, list: DefinitionList): Promise<void> {
  const [, , , { languageByName }] = await loading;
  const info = languageByName(language)!;
  let opened = stores.get(where.directory);
  if (!opened) {
    const { DefinitionStore } = await import('./definition-store.js');
    opened = new DefinitionStore(where);
    stores.set(where.directory, opened);
  }
  await opened.put(info, source, list);
}

async function answer(
  request: ListingRequest,
): Promise<{ reply: ListingReply; list?: DefinitionList; source?: string }> {
  const cancelled = (): boolean => Atomics.load(cancelCell, 0) === request.id;
  // Decoded before anything is awaited or answered: the host reuses the shared bytes for its next request.
  const source = request.source ?? sourceText(request.bytes ?? new Uint8Array(0));
  try {
    if (cancelled()) return { reply: { id: request.id, error: { name: 'CancelledError', message: 'cancelled' } } };
    const [{ withTree }, { findDefinitions }, { summariseSyntaxErrors }, { languageByName }] = await loading;
    const info = languageByName(request.language);
    if (!info) throw new Error(`unknown language ${request.language}`);
    const list = await withTree(
      source,
      info,
      (tree, grammar) => ({
        language: info.name,
        definitions: findDefinitions(tree, grammar, info, source, cancelled),
        syntaxErrors: summariseSyntaxErrors(tree.rootNode),
      }),
      request.document,
      cancelled,
    );
    const packed = packList(list);
    return { reply: packed ? { id: request.id, list: packed } : { id: request.id, plain: list }, list, source };
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    return { reply: { id: request.id, error: { name: cancelled() ? 'CancelledError' : name, message } } };
  }
}

/**
 * A warm-up step waits for the requests and store writes (whenIdle) and, while the host measures a run, for its
 * end.
 */
async function beforeWarmUpStep(): Promise<void> {
  while (working > 0) await whenIdle;
  while (Atomics.load(holdCell, 0) !== 0) await new Promise((resolve) => setTimeout(resolve, HOLD_POLL_MS));
}

/**
 * Tree-sitter's heap made resident at the end of the warm-up (grammar.ts readyHeap): what a first listing of a large
 * file (jquery.js, 10,907 lines) would otherwise page in on its call's path. 8 MB: 4 MB left ~800 of its ~1,400 page
 * faults, 8 and 16 MB ~330 (what remains is V8's heap). Last, because it is worth less than a grammar: it costs
 * ~2,000 faults (70-120 ms on the benches' VM), and placed before Python's grammar it made that grammar ready that
 * much later for a first call arriving meanwhile.
 */
const READY_HEAP_BYTES = 8 * 1024 * 1024;
/**
 * It is readied in steps of 1 MB each: each step takes the whole 8 MB block and writes the pages of its own megabyte
 * only, so a request that arrives meanwhile waits for ~256 page faults, not for the whole 8 MB. Between steps the
 * block is free for the request's parse; a tree kept from it may move the block elsewhere, and still the steps
 * touch 8 MB in all, not a growing block each (1 + 2 + … + 8 MB).
 */
const READY_HEAP_STEP_BYTES = 1024 * 1024;

async function warmUp(languages: readonly string[]): Promise<void> {
  const { warmUpCode } = await import('./warm-up.js');
  await warmUpCode(languages, { beforeStep: beforeWarmUpStep });
  const [{ readyHeap }] = await loading;
  for (let from = 0; from < READY_HEAP_BYTES; from += READY_HEAP_STEP_BYTES) {
    await beforeWarmUpStep();
    await readyHeap(READY_HEAP_BYTES, from, from + READY_HEAP_STEP_BYTES).catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

if (data.warmUp.length > 0) {
  void warmUp(data.warmUp)
    .catch(() => undefined)
    .finally(() => parentPort!.postMessage({ id: 0 } satisfies ListingReply));
}
