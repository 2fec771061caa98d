/**
 * The Qdrant store (when QDRANT_URL is set), through @qdrant/js-client-rest.
 *
 * - One collection per tree and embedder (`faultline-<tree-key>-<embedder>`) with two named
 *   vectors: `dense` (the embedder's, cosine) and `lexical`, a sparse vector of the chunk's
 *   code-aware terms (tokens.ts sparseDocument) with Qdrant's IDF modifier. An existing collection
 *   of another size is an error, not overwritten; one in an older layout (LAYOUT: one unnamed
 *   vector, a point without this `layout` in its payload, or no `names_hex` text index) is deleted
 *   and rebuilt by the next index run, with a note; search asks for that run.
 * - Search (Query API, Qdrant 1.10 or later): the dense and the lexical (sparse) vectors each give
 *   candidates, ranked and scored as the local store's are (fusion.ts), with one difference: the
 *   lexical score does not weigh words by rarity (Qdrant does not expose document frequencies;
 *   its IDF modifier only picks the lexical candidates). The cosine of a candidate the dense
 *   channel did not return is asked for with the same query limited to those ids. An identifier
 *   query also looks the name up
 *   in the `names` payload (keyword-indexed; tokens.ts symbolTerms): exactly, and as a prefix of a
 *   name, as the local store does. Qdrant has no prefix match on keywords, so each name is also
 *   kept hex-encoded in `names_hex`, under a full-text index with the `prefix` tokenizer: a hex
 *   word is one token, and the hex of a name's prefix is a prefix of the name's hex. Exact matches
 *   rank first, then the prefix matches (fusion.ts rankDefinitions).
 * - Point ids are UUIDv5 of path, symbol and content hash, so re-indexing a chunk overwrites it.
 * - Payload: path, language, symbol, kind, start_line, end_line, hash, file_hash, code, names,
 *   names_hex, layout; keyword indexes on path, language and names, the text index on names_hex.
 * - A changed file: its new points are upserted (in batches of UPSERT_BATCH), then its points not
 *   among them are deleted; searches meanwhile see old and new chunks, never none. A run stopped
 *   in between leaves two file hashes on the file's points, which fileHashes() reports as '' so
 *   the next run redoes that file.
 * - Every failure names the URL: an unreachable server, an HTTP error with Qdrant's message.
 */
import { QdrantClient } from '@qdrant/js-client-rest';
import { messageOf } from '../kernel/errors.js';
import { IndexError } from './errors.js';
import {
  isUnder,
  type ChunkRecord,
  type StoreHit,
  type StoredChunk,
  type StoreQuery,
  type VectorStore,
} from './store.js';
import type { ChunkKind } from '../code/chunk.js';
import { unweightedLexicalScores } from './bm25.js';
import { queryForms } from './vocabulary.js';
import { MIN_PREFIX_CHARS, rankCandidates, rankDefinitions, type Candidate } from './fusion.js';
import { lexicalFields, sparseDocument, sparseQuery, symbolTerms, type SparseVector } from './tokens.js';

/** Per channel, as the local store: enough that fusion still fills the limit. */
const CANDIDATES = 100;
/** Definitions read for an exact name (a common one, `__init__`, has many). */
const SYMBOL_CANDIDATES = 500;
/**
 * The layout of the collection and its points; another one is rebuilt by the next index run.
 * 1: one unnamed vector. 2: dense and sparse vectors, names qualified from the tree's own name
 * (not recorded: a collection without `layout` is 2 or older). 3: `layout` and `names_hex`.
 */
export const LAYOUT = 3;
/** Qdrant's guidance is 64–256 points per upsert. */
export const UPSERT_BATCH = 128;
const SCROLL_PAGE = 1000;
/** Per request; the client's own default is five minutes. */
const REQUEST_TIMEOUT_MS = 60_000;

export interface QdrantSettings {
  url: string;
  apiKey?: string | undefined;
}

type Payload = {
  path: string;
  language: string;
  symbol: string;
  kind: ChunkKind;
  start_line: number;
  end_line: number;
  hash: string;
  file_hash: string;
  code: string;
  names: string[];
  names_hex: string[];
  layout: number;
};

interface PendingFile {
  path: string;
  ids: string[];
  /** Whether the collection may hold older points of this file that must go. */
  hadPoints: boolean;
}

export class QdrantStore implements VectorStore {
  readonly description: string;
  readonly wantsVectors = true;
  private readonly client: QdrantClient;
  private points: Array<{ id: string; vector: { dense: number[]; lexical: SparseVector }; payload: Payload }> = [];
  /** Set when this run found the collection in an older layout and rebuilt it. */
  note: string | undefined;
  /** Why the collection is in an older layout (undefined: it is not). */
  private legacyLayout: string | undefined;
  private files: PendingFile[] = [];
  private known: Map<string, string> | undefined;
  private collectionDimension: number | undefined | null = null;

  constructor(
    private readonly settings: QdrantSettings,
    readonly collection: string,
    /** The indexed directory's own name, the first segment of module paths (tokens.ts symbolTerms). */
    private readonly treeName = '',
  ) {
    this.description = `qdrant ${settings.url} collection ${collection}`;
    this.client = new QdrantClient({
      url: settings.url,
      // As a header rather than `apiKey`, which would print a warning on every http:// client.
      ...(settings.apiKey ? { headers: { 'api-key': settings.apiKey } } : {}),
      checkCompatibility: false,
      timeout: REQUEST_TIMEOUT_MS,
    });
  }

  /** Whether the collection exists (searching a tree that was never indexed is an error). */
  async exists(): Promise<boolean> {
    return this.call('check the collection', () => this.client.collectionExists(this.collection)).then(
      (answer) => answer.exists,
    );
  }

  async dimension(): Promise<number | undefined> {
    if (this.collectionDimension !== null) return this.collectionDimension;
    if (!(await this.exists())) return (this.collectionDimension = undefined);
    const info = await this.call('read the collection', () => this.client.getCollection(this.collection));
    const vectors = info.config.params.vectors as { size?: number; dense?: { size?: number } } | undefined;
    this.legacyLayout = await this.olderLayout(vectors, info.payload_schema);
    // An older layout is rebuilt by the next index run: until then no vectors count as indexed.
    if (this.legacyLayout !== undefined) return (this.collectionDimension = undefined);
    return (this.collectionDimension = typeof vectors?.dense?.size === 'number' ? vectors.dense.size : undefined);
  }

  /** Why the existing collection is not in LAYOUT, or undefined when it is. */
  private async olderLayout(
    vectors: { size?: number } | undefined,
    schema: Record<string, unknown> | undefined | null,
  ): Promise<string | undefined> {
    if (typeof vectors?.size === 'number') return 'without hybrid search';
    const sample = await this.call('read the layout', () =>
      this.client.scroll(this.collection, { limit: 1, with_payload: ['layout'], with_vector: false }),
    );
    const layout = (sample.points[0]?.payload as { layout?: unknown } | null | undefined)?.layout;
    if (sample.points.length > 0 && layout !== LAYOUT)
      return `layout ${typeof layout === 'number' ? layout : 2}, this one writes ${LAYOUT}`;
    if (!schema || !('names_hex' in schema)) return `no prefix index on names, this one writes layout ${LAYOUT}`;
    return undefined;
  }

  async fileHashes(): Promise<Map<string, string>> {
    const hashes = new Map<string, string>();
    // A collection in the old layout is rebuilt whole: none of its files counts as indexed.
    if ((await this.exists()) && (await this.dimension(), this.legacyLayout === undefined)) {
      let offset: string | number | Record<string, unknown> | null | undefined;
      do {
        const page = await this.call('list the indexed files', () =>
          this.client.scroll(this.collection, {
            limit: SCROLL_PAGE,
            with_payload: ['path', 'file_hash'],
            with_vector: false,
            ...(offset !== undefined && offset !== null ? { offset: offset as string } : {}),
          }),
        );
        for (const point of page.points) {
          const payload = point.payload as Partial<Payload> | null | undefined;
          if (typeof payload?.path !== 'string' || typeof payload.file_hash !== 'string') continue;
          const seen = hashes.get(payload.path);
          hashes.set(payload.path, seen === undefined || seen === payload.file_hash ? payload.file_hash : '');
        }
        offset = page.next_page_offset as typeof offset;
      } while (offset !== undefined && offset !== null);
    }
    this.known = hashes;
    return hashes;
  }

  async replaceFile(path: string, chunks: readonly StoredChunk[]): Promise<void> {
    if (chunks.length > 0) await this.ensureCollection(vectorOf(chunks[0]!).length);
    const hadPoints = (this.known ?? (await this.fileHashes())).has(path);
    for (const chunk of chunks) {
      const vector = { dense: Array.from(vectorOf(chunk)), lexical: sparseDocument(lexicalFields(chunk)) };
      this.points.push({ id: chunk.id, vector, payload: payloadOf(chunk, this.treeName) });
    }
    this.files.push({ path, ids: chunks.map((chunk) => chunk.id), hadPoints });
    if (this.points.length >= UPSERT_BATCH) await this.flush();
  }

  async commit(): Promise<void> {
    await this.flush();
  }

  async count(): Promise<number> {
    if (!(await this.exists())) return 0;
    const answer = await this.call('count the points', () => this.client.count(this.collection, { exact: true }));
    return answer.count;
  }

  async search(query: StoreQuery, limit: number, within?: readonly string[]): Promise<StoreHit[]> {
    const vector = query.vector;
    if (vector === undefined) return [];
    const dimension = await this.dimension();
    if (this.legacyLayout !== undefined) {
      throw new IndexError(
        `${this.description} was written by an older faultline ` +
          `(${this.legacyLayout}); index the tree again to rebuild it once`,
      );
    }
    if (dimension !== undefined && dimension !== vector.length) {
      throw new IndexError(
        `the query vector has dimension ${vector.length} but ${this.description} has dimension ${dimension}`,
      );
    }
    // Qdrant has no prefix match on a keyword field: the paths under `within` are listed instead.
    let filter: { must: Array<{ key: string; match: { any: string[] } }> } | undefined;
    if (within !== undefined) {
      const paths = [...(await this.fileHashes()).keys()].filter((path) => isUnder(path, within));
      if (paths.length === 0) return [];
      filter = { must: [{ key: 'path', match: { any: paths } }] };
    }
    const scoped = filter ? { filter } : {};
    const dense = Array.from(vector);
    // The two channels apart, each with its own scores: the dense one's are the cosines the score uses.
    const [nearest, lexical] = await Promise.all([
      this.call('search', () =>
        this.client.query(this.collection, {
          query: dense,
          using: 'dense',
          limit: CANDIDATES,
          with_payload: true,
          ...scoped,
        }),
      ),
      query.terms.length > 0
        ? this.call('search', () =>
            this.client.query(this.collection, {
              query: sparseQuery(query.terms),
              using: 'lexical',
              limit: CANDIDATES,
              with_payload: true,
              ...scoped,
            }),
          )
        : { points: [] },
    ]);
    const candidates = new Map<string, Candidate>();
    const cosines = new Map<string, number>();
    for (const point of nearest.points) {
      for (const chunk of recordsOf([point])) {
        cosines.set(chunk.id, point.score);
        candidates.set(chunk.id, { chunk, lexical: 0 });
      }
    }
    for (const chunk of recordsOf(lexical.points))
      if (!candidates.has(chunk.id)) candidates.set(chunk.id, { chunk, lexical: 0 });
    if (query.symbol !== undefined) {
      for (const { chunk, exact, rank } of await this.namedDefinitions(
        query.symbol,
        query.symbolText,
        filter?.must ?? [],
      )) {
        if (!exact && query.symbol.length < MIN_PREFIX_CHARS) continue;
        candidates.set(chunk.id, { chunk, lexical: 0, ...(exact ? { exactRank: rank } : { prefixRank: rank }) });
      }
    }
    // The cosine of the candidates the dense channel did not return: the same query, limited to them.
    const unscored = [...candidates.keys()].filter((id) => !cosines.has(id));
    if (unscored.length > 0) {
      const answer = await this.call('search', () =>
        this.client.query(this.collection, {
          query: dense,
          using: 'dense',
          limit: unscored.length,
          with_payload: false,
          filter: { must: [{ has_id: unscored }] },
        }),
      );
      for (const point of answer.points) cosines.set(String(point.id), point.score);
    }
    const lexicalScores = unweightedLexicalScores(
      query.concepts,
      [...candidates.values()].map((candidate) => candidate.chunk),
    );
    return rankCandidates(
      [...candidates.values()].map((candidate) => ({
        ...candidate,
        lexical: lexicalScores.get(candidate.chunk.id) ?? 0,
        cosine: cosines.get(candidate.chunk.id) ?? 0,
      })),
      {
        limit,
        symbol: query.symbol,
        operations: query.operations,
        action: query.action,
        forms: queryForms(query.concepts),
      },
    );
  }

  /**
   * The definitions named by the query, exactly or by a prefix of their name, in rankDefinitions'
   * order, each with its place among the exact or the prefix matches.
   */
  private async namedDefinitions(
    symbol: string,
    written: string | undefined,
    scope: ReadonlyArray<{ key: string; match: { any: string[] } }>,
  ): Promise<Array<{ chunk: ChunkRecord; exact: boolean; rank: number }>> {
    const exactPage = await this.call('look the name up', () =>
      this.client.scroll(this.collection, {
        limit: SYMBOL_CANDIDATES,
        with_payload: true,
        with_vector: false,
        filter: { must: [{ key: 'names', match: { value: symbol } }, ...scope] },
      }),
    );
    // Then the definitions whose name starts with the query (the exact ones again among them).
    const prefixPage = await this.call('look the name up as a prefix', () =>
      this.client.scroll(this.collection, {
        limit: SYMBOL_CANDIDATES,
        with_payload: true,
        with_vector: false,
        filter: { must: [{ key: 'names_hex', match: { text: hexOf(symbol) } }, ...scope] },
      }),
    );
    const found = [...exactPage.points, ...prefixPage.points].flatMap((point) => {
      const names = (point.payload as Partial<Payload> | null | undefined)?.names;
      return recordsOf([point]).map((chunk) => ({ chunk, exact: Array.isArray(names) && names.includes(symbol) }));
    });
    const named = rankDefinitions(found, written ?? symbol).slice(0, CANDIDATES);
    let exactRank = 0;
    let prefixRank = 0;
    return named.map(({ chunk, exact }) => ({ chunk, exact, rank: exact ? exactRank++ : prefixRank++ }));
  }

  /** Upserts the buffered points, then deletes the stale points of every file they complete. */
  private async flush(): Promise<void> {
    for (let start = 0; start < this.points.length; start += UPSERT_BATCH) {
      const batch = this.points.slice(start, start + UPSERT_BATCH);
      await this.call('upsert points', () => this.client.upsert(this.collection, { wait: true, points: batch }));
    }
    this.points = [];
    const files = this.files;
    this.files = [];
    for (const file of files) {
      if (!file.hadPoints) continue;
      const filter = {
        must: [{ key: 'path', match: { value: file.path } }],
        ...(file.ids.length > 0 ? { must_not: [{ has_id: file.ids }] } : {}),
      };
      await this.call('delete stale points', () => this.client.delete(this.collection, { wait: true, filter }));
      if (file.ids.length === 0) this.known?.delete(file.path);
    }
  }

  private async ensureCollection(size: number): Promise<void> {
    const existing = await this.dimension();
    if (existing === size) return;
    if (existing !== undefined) {
      throw new IndexError(
        `${this.description} has vectors of dimension ${existing} but the embedder gives ${size}; ` +
          'it was built with another embedding model or dimension (delete the collection or use another embedder)',
      );
    }
    if (this.legacyLayout !== undefined) {
      await this.call('delete the collection in an older layout', () => this.client.deleteCollection(this.collection));
      this.note =
        `the Qdrant collection was in the layout of an older faultline ` +
        `(${this.legacyLayout}) and was rebuilt once`;
      this.legacyLayout = undefined;
      this.known = new Map();
    }
    await this.call('create the collection', () =>
      this.client.createCollection(this.collection, {
        vectors: { dense: { size, distance: 'Cosine' } },
        sparse_vectors: { lexical: { modifier: 'idf' } },
      }),
    );
    for (const field of ['path', 'language', 'names']) {
      await this.call(`index the payload field ${field}`, () =>
        this.client.createPayloadIndex(this.collection, { field_name: field, field_schema: 'keyword', wait: true }),
      );
    }
    await this.call('index the payload field names_hex', () =>
      this.client.createPayloadIndex(this.collection, {
        field_name: 'names_hex',
        // Every prefix of each hex name is a token; a query is one whole hex word (see hexOf).
        field_schema: { type: 'text', tokenizer: 'prefix', min_token_len: 2, lowercase: true },
        wait: true,
      }),
    );
    this.collectionDimension = size;
  }

  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw new IndexError(describeFailure(what, this.settings.url, error));
    }
  }
}

function describeFailure(what: string, url: string, error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
    return (
      `could not reach Qdrant at ${url} to ${what}: ${cause !== undefined ? messageOf(cause) : error.message} ` +
      `(check QDRANT_URL)`
    );
  }
  // The client's HTTP errors carry Qdrant's own explanation in the body; the message is only the status text.
  const { status, data } = error as { status?: unknown; data?: { status?: { error?: unknown } } };
  const detail = typeof data?.status?.error === 'string' ? data.status.error : messageOf(error);
  const hint = status === 401 || status === 403 ? ' (check QDRANT_API_KEY)' : '';
  return `Qdrant at ${url} failed to ${what}: ${detail.replace(/\s+/g, ' ').trim()}${hint}`;
}

function payloadOf(chunk: StoredChunk, treeName: string): Payload {
  const names = symbolTerms(chunk, treeName);
  return {
    path: chunk.path,
    language: chunk.language,
    symbol: chunk.symbol,
    kind: chunk.kind,
    start_line: chunk.startLine,
    end_line: chunk.endLine,
    hash: chunk.hash,
    file_hash: chunk.fileHash,
    code: chunk.text,
    names,
    names_hex: names.map(hexOf),
    layout: LAYOUT,
  };
}

/**
 * A name as one alphanumeric word for the prefix tokenizer, which would split it at `.` and `_`:
 * its UTF-8 bytes in hex, so that a prefix of the name is a prefix of this word.
 */
export function hexOf(name: string): string {
  return Buffer.from(name, 'utf8').toString('hex');
}

function recordsOf(
  points: ReadonlyArray<{ id: string | number; payload?: Record<string, unknown> | null | undefined }>,
): ChunkRecord[] {
  return points.flatMap((point) => {
    const payload = point.payload as Payload | null | undefined;
    return payload && typeof payload.path === 'string' ? [recordOf(String(point.id), payload)] : [];
  });
}

function recordOf(id: string, payload: Payload): ChunkRecord {
  return {
    id,
    path: payload.path,
    language: payload.language,
    symbol: payload.symbol,
    kind: payload.kind,
    startLine: payload.start_line,
    endLine: payload.end_line,
    hash: payload.hash,
    fileHash: payload.file_hash,
    text: payload.code,
  };
}

/** Qdrant stores every chunk with its vector (wantsVectors): the indexer always embeds for it. */
function vectorOf(chunk: StoredChunk): Float32Array {
  if (!chunk.vector) throw new IndexError(`chunk ${chunk.symbol} of ${chunk.path} has no vector`);
  return chunk.vector;
}
