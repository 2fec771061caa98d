/**
 * The listing thread: a worker thread (src/code/listing-worker.ts) that parses for a long-lived
 * host (the MCP server), so its first listing does not pay for a cold tree-sitter.
 *
 * A fresh process's first listing pays for compiling tree-sitter's WebAssembly and the grammar,
 * compiling the definitions query (145-215 ms while that code is cold, 18 ms warm) and for parsing
 * with code V8 has not tiered up yet; compiled code does not cross threads. Started at the host's
 * start, the thread does all that on the second core while the host loads its modules and answers
 * `initialize`, and the first call finds it warm. Listing there also keeps the parse off the host's
 * event loop.
 *
 * Bounds: one thread per process, one request at a time (the rest wait on this side, where a
 * cancelled one is dropped); a request cancelled while it runs is stopped inside tree-sitter, so
 * the thread is free for the next at once; the thread's JavaScript heap is capped
 * (MAX_HEAP_MB; its WebAssembly memory holds the loaded grammars and the bounded recent trees);
 * it never keeps the process alive (referenced only while a request or its store write is under way) and ends after
 * IDLE_MS without one, to start again, without a warm-up, on the next request. A thread that
 * dies (out of memory) fails the request under way and the next request starts a new one.
 */
import { Worker } from 'node:worker_threads';
import { CancelledError } from '../kernel/errors.js';
import type { Definition, DefinitionList } from './index.js';

/** What the thread is started with. */
export interface ListingThreadData {
  /** Languages (names) whose grammars and queries it loads and exercises at once. */
  warmUp: string[];
  /** One Int32 cell: the id of the request under way that the host cancelled. */
  cancel: SharedArrayBuffer;
  /** One Int32 cell: 1 while the host measures a run, when the warm-up holds between its steps (hold()). */
  hold: SharedArrayBuffer;
}

/** The definition store the thread writes what it parsed to, after answering (DefinitionStore.portable()). */
export interface ThreadStore {
  directory: string;
  maxBytes: number;
  maxEntries: number;
}

export interface ListingRequest {
  id: number;
  /** The text, or (when absent) the UTF-8 bytes it is decoded from with sourceText(), in shared memory. */
  source?: string;
  bytes?: Uint8Array;
  language: string;
  document?: string;
  store?: ThreadStore;
}

export interface ListingReply {
  /** 0: the warm-up is over; -1: a store write is over (`list` and `error` absent). */
  id: number;
  list?: PackedList;
  /** The list as it is, when it cannot be packed (a name holding NUL). */
  plain?: DefinitionList;
  error?: { name: string; message: string };
}

/** The largest source handed over as bytes in shared memory (access.ts reads at most 5 MB); a larger one is posted. */
const MAX_SHARED_BYTES = 8 * 1024 * 1024;
/**
 * The largest shared buffer kept between requests: every source up to it reuses the one buffer (most files: jquery.js
 * is 280 KB). A larger one gets a buffer of its own, dropped once the thread has it, so a server that once listed a
 * big file does not hold up to MAX_SHARED_BYTES for the rest of its life.
 */
export const KEEP_SHARED_BYTES = 1024 * 1024;

/** What the MCP server warms: the languages agents list most, the bench's two among them. */
export const DEFAULT_WARM_UP: readonly string[] = ['typescript', 'javascript', 'python'];
/** The thread ends after this long without a request (and starts again on the next one). */
export const IDLE_MS = 10 * 60_000;
/** The thread's JavaScript heap; a 5 MB source and its definitions take a small part of it. */
const MAX_HEAP_MB = 256;
/**
 * Its young generation (V8's default grows to 48 MB). What a listing allocates there (the query's matches, the
 * definitions) is garbage once it has answered, so a larger nursery only touches fresh pages as it grows: 200-750
 * page faults on some warm listings, ~1,750 on a fresh server's first jquery.js, against ~55-75 and ~1,300 at 4 MB
 * (8 MB: ~200 and ~1,700), for the same CPU within noise (interleaved A/B runs). A first touch of a page costs the
 * kernel time on any machine (35-60 us each on the 2-core VM these figures come from) and the page stays resident.
 */
const MAX_YOUNG_MB = 4;

interface Pending {
  request: ListingRequest;
  resolve: (list: DefinitionList) => void;
  reject: (error: Error) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  settled: boolean;
}

export class ListingThread {
  private worker: Worker | undefined;
  private readonly cancelCell = new Int32Array(new SharedArrayBuffer(4));
  private readonly holdCell = new Int32Array(new SharedArrayBuffer(4));
  /**
   * Where a request's source bytes are handed over, reused (grown to the largest source, at most KEEP_SHARED_BYTES).
   * Posting a 100 KB text made a serialised copy and a new string on the thread, both in freshly mapped memory: 35%
   * of a warm listing's page faults on this thread (perf). One request is on the thread at a time (pump()), and the
   * thread decodes the bytes before it answers, so the next request cannot overwrite them while they are read.
   */
  private shared: Uint8Array | undefined;
  private nextId = 1;
  private readonly waiting: Pending[] = [];
  /** The request sent to the thread and not answered yet (possibly cancelled meanwhile). */
  private current: Pending | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Store writes the thread has yet to finish: it stays referenced meanwhile. */
  private writes = 0;
  private warmed!: () => void;
  /** Resolves when the first thread's warm-up is over (never rejects; a failed step is skipped). */
  readonly warmedUp = new Promise<void>((resolve) => (this.warmed = resolve));

  constructor(
    private readonly warmUp: readonly string[] = [],
    private readonly idleMs = IDLE_MS,
  ) {}

  /** Starts the thread now (warming `warmUp`'s languages) unless it runs already. */
  start(): void {
    this.ensureWorker(this.warmUp);
    this.idle();
  }

  /** Holds the warm-up between its steps (requests are answered as ever), or lets it go on. */
  hold(on: boolean): void {
    Atomics.store(this.holdCell, 0, on ? 1 : 0);
  }

  /** The bytes of the shared buffer kept between requests (for tests). */
  get sharedBytes(): number {
    return this.shared?.byteLength ?? 0;
  }

  /** Whether the thread is running (for tests). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /**
   * The definitions of `source` as listDefinitions parses them, parsed on the thread; with
   * `store`, the thread writes them there once it has answered.
   */
  list(
    source: string,
    language: string,
    document?: string,
    signal?: AbortSignal,
    store?: ThreadStore,
    bytes?: Uint8Array,
  ): Promise<DefinitionList> {
    if (signal?.aborted) return Promise.reject(new CancelledError());
    return new Promise<DefinitionList>((resolve, reject) => {
      const pending: Pending = {
        request: {
          id: this.nextId++,
          // The bytes are copied into shared memory when the request is sent (pump()), not while it waits.
          ...(bytes !== undefined && bytes.byteLength <= MAX_SHARED_BYTES ? { bytes } : { source }),
          language,
          ...(document === undefined ? {} : { document }),
          ...(store === undefined ? {} : { store }),
        },
        resolve,
        reject,
        signal,
        onAbort: () => this.cancel(pending),
        settled: false,
      };
      signal?.addEventListener('abort', pending.onAbort, { once: true });
      this.waiting.push(pending);
      this.pump();
    });
  }

  /** Ends the thread; requests waiting or under way fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.writes = 0;
    clearTimeout(this.idleTimer);
    for (const pending of [...this.waiting.splice(0), ...(this.current ? [this.current] : [])])
      this.settle(pending, new Error('the listing thread was closed'));
    this.current = undefined;
    await worker?.terminate();
  }

  private cancel(pending: Pending): void {
    if (pending === this.current) Atomics.store(this.cancelCell, 0, pending.request.id);
    else this.waiting.splice(this.waiting.indexOf(pending), 1);
    this.settle(pending, new CancelledError());
  }

  private settle(pending: Pending, outcome: DefinitionList | Error): void {
    if (pending.settled) return;
    pending.settled = true;
    pending.signal?.removeEventListener('abort', pending.onAbort);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  private pump(): void {
    if (this.current || this.waiting.length === 0) return;
    clearTimeout(this.idleTimer);
    const worker = this.ensureWorker([]);
    this.current = this.waiting.shift()!;
    if (this.current.request.store) this.writes++;
    worker.ref();
    worker.postMessage(this.sharing(this.current.request));
  }

  /** The request as posted: its bytes copied into the shared buffer and sent as a view on it. */
  private sharing(request: ListingRequest): ListingRequest {
    const bytes = request.bytes;
    if (!bytes) return request;
    if (bytes.byteLength > KEEP_SHARED_BYTES) {
      // Its own, not kept: the thread's view is the last reference once the request is answered.
      const own = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
      own.set(bytes);
      return { ...request, bytes: own };
    }
    if (!this.shared || this.shared.byteLength < bytes.byteLength)
      this.shared = new Uint8Array(new SharedArrayBuffer(Math.max(bytes.byteLength, 64 * 1024)));
    this.shared.set(bytes);
    return { ...request, bytes: this.shared.subarray(0, bytes.byteLength) };
  }

  /** No request under way: the thread must not keep the process alive, and ends after idleMs. */
  private idle(): void {
    const worker = this.worker;
    if (!worker || this.current || this.writes > 0) return;
    worker.unref();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.worker === worker && !this.current) void this.close();
    }, this.idleMs).unref();
  }

  private ensureWorker(warmUp: readonly string[]): Worker {
    if (this.worker) return this.worker;
    const data: ListingThreadData = {
      warmUp: [...warmUp],
      cancel: this.cancelCell.buffer as SharedArrayBuffer,
      hold: this.holdCell.buffer as SharedArrayBuffer,
    };
    const worker = new Worker(new URL('./listing-worker.js', import.meta.url), {
      workerData: data,
      // A host run with --input-type (node -e) passes it on, and a worker started with it fails to start.
      execArgv: process.execArgv.filter((flag) => !flag.startsWith('--input-type')),
      resourceLimits: { maxOldGenerationSizeMb: MAX_HEAP_MB, maxYoungGenerationSizeMb: MAX_YOUNG_MB },
      // What the thread prints goes through this process's stdout, which MCP on stdio has already
      // redirected to stderr (transports/stdout-guard.ts). Piping it here instead would keep the
      // process alive, the pipe being a handle of its own.
    });
    worker.on('message', (reply: ListingReply) => this.answered(reply));
    worker.on('error', (error) => this.stopped(worker, error));
    worker.on('exit', (code) => this.stopped(worker, new Error(`the listing thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private answered(reply: ListingReply): void {
    if (reply.id === 0) return this.warmed();
    if (reply.id === -1) {
      this.writes = Math.max(0, this.writes - 1);
      return this.idle();
    }
    const pending = this.current;
    if (!pending || pending.request.id !== reply.id) return;
    this.current = undefined;
    if (reply.list) this.settle(pending, unpackList(reply.list));
    else if (reply.plain) this.settle(pending, reply.plain);
    else {
      const error = reply.error?.name === 'CancelledError' ? new CancelledError() : new Error(reply.error?.message);
      this.settle(pending, error);
    }
    this.pump();
    this.idle();
  }

  private stopped(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.writes = 0;
    clearTimeout(this.idleTimer);
    const pending = this.current;
    this.current = undefined;
    if (pending) this.settle(pending, new Error(`listing failed: ${error.message}`));
    this.pump();
  }
}

/**
 * A DefinitionList as two blocks: the strings joined by NUL (a list whose names hold one is not
 * packed) and the numbers in an Int32Array, transferred. Copying
 * hundreds of small objects between threads cost milliseconds; two blocks cost microseconds.
 */
export interface PackedList {
  language: string;
  /** name, qualifiedName and kind of each definition, then the syntax errors' first lines. */
  strings: string;
  /** Per definition its span's four numbers, a body flag and the body's four (0 without); then the error count. */
  numbers: Int32Array;
}

const NUMBERS_PER_DEFINITION = 9;

export function packList(list: DefinitionList): PackedList | undefined {
  const numbers = new Int32Array(list.definitions.length * NUMBERS_PER_DEFINITION + 1);
  const strings: string[] = [];
  let at = 0;
  // Written in place and checked name by name: an array per definition and a split of the joined
  // strings to look for NUL cost more than the rest of the packing on a 600-definition file.
  for (const definition of list.definitions) {
    if (definition.name.includes('\0') || definition.qualifiedName.includes('\0')) return undefined;
    strings.push(definition.name, definition.qualifiedName, definition.kind);
    numbers[at] = definition.startLine;
    numbers[at + 1] = definition.endLine;
    numbers[at + 2] = definition.startOffset;
    numbers[at + 3] = definition.endOffset;
    const body = definition.body;
    if (body) {
      numbers[at + 4] = 1;
      numbers[at + 5] = body.startLine;
      numbers[at + 6] = body.endLine;
      numbers[at + 7] = body.startOffset;
      numbers[at + 8] = body.endOffset;
    }
    at += NUMBERS_PER_DEFINITION;
  }
  numbers[at] = list.syntaxErrors.count;
  strings.push(list.syntaxErrors.firstLines.join(','));
  return { language: list.language, strings: strings.join('\0'), numbers };
}

export function unpackList(packed: PackedList): DefinitionList {
  const strings = packed.strings.split('\0');
  const numbers = packed.numbers;
  const count = (numbers.length - 1) / NUMBERS_PER_DEFINITION;
  const definitions: DefinitionList['definitions'] = new Array(count);
  for (let index = 0, at = 0; index < count; index++, at += NUMBERS_PER_DEFINITION) {
    definitions[index] = {
      name: strings[index * 3]!,
      qualifiedName: strings[index * 3 + 1]!,
      kind: strings[index * 3 + 2] as Definition['kind'],
      startLine: numbers[at]!,
      endLine: numbers[at + 1]!,
      startOffset: numbers[at + 2]!,
      endOffset: numbers[at + 3]!,
      body:
        numbers[at + 4] === 1
          ? {
              startLine: numbers[at + 5]!,
              endLine: numbers[at + 6]!,
              startOffset: numbers[at + 7]!,
              endOffset: numbers[at + 8]!,
            }
          : null,
    };
  }
  const firstLines = strings[count * 3]!;
  return {
    language: packed.language,
    definitions,
    syntaxErrors: {
      count: numbers[numbers.length - 1]!,
      firstLines: firstLines === '' ? [] : firstLines.split(',').map(Number),
    },
  };
}

let shared: ListingThread | undefined;

/**
 * Starts this process's listing thread, warming `warmUp`, if it is not running: from then on
 * listDefinitions (and what uses it) parses there. For a long-lived host; a one-shot CLI run
 * parses on its own thread. FAULTLINE_LISTING_THREAD=off (0, false, no) starts none: undefined.
 */
export function startListingThread(warmUp: readonly string[] = DEFAULT_WARM_UP): ListingThread | undefined {
  if (/^\s*(off|0|false|no)\s*$/i.test(process.env.FAULTLINE_LISTING_THREAD ?? '')) return undefined;
  shared ??= new ListingThread(warmUp);
  shared.start();
  return shared;
}

/** The process's listing thread, when one was started. */
export function listingThread(): ListingThread | undefined {
  return shared;
}

/** Ends the process's listing thread (listDefinitions parses on the caller's thread again). */
export async function stopListingThread(): Promise<void> {
  const thread = shared;
  shared = undefined;
  await thread?.close();
}
