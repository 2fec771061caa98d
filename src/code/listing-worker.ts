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
import type { ListingReply, ListingRequest, ListingThreadData } from './listing-thread.js';

const data = workerData as ListingThreadData;
const cancelCell = new Int32Array(data.cancel);

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
/** Resolves when no request waits or runs: the warm-up takes its steps only then. */
let whenIdle: Promise<void> = Promise.resolve();
let becameIdle = (): void => {};

parentPort!.on('message', (request: ListingRequest) => {
  queue.push(request);
  void drain();
});

async function drain(): Promise<void> {
  if (busy) return;
  busy = true;
  whenIdle = new Promise((resolve) => (becameIdle = resolve));
  try {
    for (let request = queue.shift(); request; request = queue.shift()) {
      parentPort!.postMessage(await answer(request));
    }
  } finally {
    busy = false;
    becameIdle();
  }
}

async function answer(request: ListingRequest): Promise<ListingReply> {
  const cancelled = (): boolean => Atomics.load(cancelCell, 0) === request.id;
  try {
    if (cancelled()) return { id: request.id, error: { name: 'CancelledError', message: 'cancelled' } };
    const [{ withTree }, { findDefinitions }, { summariseSyntaxErrors }, { languageByName }] = await loading;
    const info = languageByName(request.language);
    if (!info) throw new Error(`unknown language ${request.language}`);
    const list = await withTree(
      request.source,
      info,
      (tree, grammar) => ({
        language: info.name,
        definitions: findDefinitions(tree, grammar, info, request.source, cancelled),
        syntaxErrors: summariseSyntaxErrors(tree.rootNode),
      }),
      request.document,
      cancelled,
    );
    return { id: request.id, list };
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    return { id: request.id, error: { name: cancelled() ? 'CancelledError' : name, message } };
  }
}

if (data.warmUp.length > 0) {
  void import('./warm-up.js')
    .then(({ warmUpCode }) => warmUpCode(data.warmUp, { beforeStep: () => whenIdle }))
    .finally(() => parentPort!.postMessage({ id: 0 } satisfies ListingReply));
}
