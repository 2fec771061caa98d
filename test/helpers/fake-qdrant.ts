/**
 * A local HTTP server implementing the part of Qdrant's REST API that src/search/qdrant-store.ts
 * calls through @qdrant/js-client-rest, with real semantics for what the tests check: collections
 * with a fixed vector size (one unnamed vector, or a named `dense` one plus sparse vectors with
 * the IDF modifier), upsert by id, a query by one named vector (dense or sparse) with a filter, the Query API's hybrid
 * form (`prefetch` of dense
 * and sparse queries fused by `rrf`), scroll with paging and a filter, count, delete by filter, delete a collection
 * (`must` key match value/any — an array payload matches when one element does — or match text,
 * `must` and `must_not` has_id), keyword payload indexes, and full-text ones (`word`, `whitespace` and
 * `prefix` tokenizers, `lowercase`, `min_token_len`, `max_token_len`). Every request is
 * recorded (method, path, query, body, api-key header) so tests can assert what was sent.
 *
 * An unknown route answers 404, a wrong vector size 400, as Qdrant does; `apiKey` makes every
 * request without that api-key header a 401. Binds 127.0.0.1 on an ephemeral port.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';

export interface QdrantRequest {
  method: string;
  /** Path without the query string, e.g. /collections/c/points. */
  path: string;
  query: URLSearchParams;
  body: any;
  apiKey: string | undefined;
}

interface Sparse {
  indices: number[];
  values: number[];
}

interface Point {
  id: string | number;
  /** Unnamed, or named (`dense`, and sparse ones). */
  vector: number[] | Record<string, number[] | Sparse>;
  payload: Record<string, unknown>;
}

interface Collection {
  size: number;
  /** Whether the dense vector is named `dense` (hybrid layout) rather than unnamed. */
  named: boolean;
  sparse: Record<string, { modifier?: string }>;
  points: Map<string, Point>;
  payloadIndexes: Map<string, string | TextIndex>;
}

/** A full-text payload index's parameters, as `PUT /collections/{name}/index` takes them. */
interface TextIndex {
  type: 'text';
  tokenizer?: 'word' | 'whitespace' | 'prefix' | 'multilingual';
  lowercase?: boolean;
  min_token_len?: number;
  max_token_len?: number;
}

export interface FakeQdrant {
  url: string;
  requests: QdrantRequest[];
  collections: Map<string, Collection>;
  /** Requests whose path ends with `suffix` (e.g. '/points' for upserts). */
  requestsTo(method: string, suffix: string): QdrantRequest[];
  close(): Promise<void>;
}

export async function startFakeQdrant(options: { apiKey?: string; scrollPage?: number } = {}): Promise<FakeQdrant> {
  const collections = new Map<string, Collection>();
  const requests: QdrantRequest[] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) =>
      send(res, 500, { status: { error: `fake-qdrant: ${(error as Error).message}` } }),
    );
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await text(req);
    const body = raw ? JSON.parse(raw) : undefined;
    const apiKey = typeof req.headers['api-key'] === 'string' ? req.headers['api-key'] : undefined;
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, body, apiKey });
    if (options.apiKey !== undefined && apiKey !== options.apiKey) {
      send(res, 401, { status: { error: 'Must provide an API key or an Authorization bearer token' } });
      return;
    }
    const match = /^\/collections\/([^/]+)(\/.*)?$/.exec(url.pathname);
    if (!match) return notFound(res, url.pathname);
    const name = decodeURIComponent(match[1]!);
    const rest = match[2] ?? '';
    const collection = collections.get(name);
    const route = `${req.method} ${rest}`;

    if (route === 'GET /exists') return ok(res, { exists: collection !== undefined });
    if (route === 'PUT ') {
      if (collection)
        return send(res, 409, { status: { error: `Wrong input: Collection \`${name}\` already exists!` } });
      const named = body.vectors.size === undefined;
      collections.set(name, {
        size: named ? body.vectors.dense.size : body.vectors.size,
        named,
        sparse: body.sparse_vectors ?? {},
        points: new Map(),
        payloadIndexes: new Map(),
      });
      return ok(res, true);
    }
    if (!collection) return send(res, 404, { status: { error: `Not found: Collection \`${name}\` doesn't exist!` } });
    switch (route) {
      case 'GET ':
        return ok(res, {
          status: 'green',
          points_count: collection.points.size,
          config: {
            params: {
              vectors: collection.named
                ? { dense: { size: collection.size, distance: 'Cosine' } }
                : { size: collection.size, distance: 'Cosine' },
              ...(collection.named ? { sparse_vectors: collection.sparse } : {}),
            },
          },
          payload_schema: Object.fromEntries(
            [...collection.payloadIndexes].map(([field, schema]) => [
              field,
              typeof schema === 'string' ? { data_type: schema } : { data_type: 'text', params: schema },
            ]),
          ),
        });
      case 'DELETE ':
        collections.delete(name);
        return ok(res, true);
      case 'PUT /index':
        if (typeof body.field_schema === 'object' && body.field_schema.type !== 'text') {
          return send(res, 400, {
            status: { error: `fake-qdrant: index type ${body.field_schema.type} is not implemented` },
          });
        }
        collection.payloadIndexes.set(body.field_name, body.field_schema);
        return ok(res, { operation_id: requests.length, status: 'completed' });
      case 'PUT /points': {
        for (const point of body.points as Point[]) {
          const dense = denseOf(point);
          if (dense.length !== collection.size) {
            return send(res, 400, {
              status: {
                error: `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${dense.length}`,
              },
            });
          }
        }
        for (const point of body.points as Point[]) collection.points.set(String(point.id), point);
        return ok(res, { operation_id: requests.length, status: 'completed' });
      }
      case 'POST /points/scroll': {
        const all = [...collection.points.values()]
          .filter((point) => matches(point, body.filter, collection))
          .sort((a, b) => String(a.id).localeCompare(String(b.id)));
        const limit = Math.min(body.limit ?? 10, options.scrollPage ?? Infinity);
        const start =
          body.offset === undefined || body.offset === null
            ? 0
            : all.findIndex((point) => String(point.id) === String(body.offset));
        const page = all.slice(start, start + limit);
        const next = all[start + limit];
        return ok(res, {
          points: page.map((point) => ({ id: point.id, payload: pick(point.payload, body.with_payload) })),
          next_page_offset: next ? next.id : null,
        });
      }
      case 'POST /points/query': {
        if (body.prefetch) {
          // Each prefetch ranks the points its filter lets through; `rrf` sums 1/(k + rank) over them.
          const fused = new Map<string, { point: Point; score: number }>();
          for (const prefetch of body.prefetch as Array<{
            query: number[] | Sparse;
            using: string;
            limit?: number;
            filter?: unknown;
          }>) {
            const candidates = [...collection.points.values()].filter((point) =>
              matches(point, prefetch.filter, collection),
            );
            const ranked = candidates
              .map((point) => ({
                point,
                score: scoreOf(collection, candidates, point, prefetch.query, prefetch.using),
              }))
              .filter(({ score }) => !Array.isArray(prefetch.query) || Number.isFinite(score))
              .filter(({ score }) => Array.isArray(prefetch.query) || score > 0)
              .sort((a, b) => b.score - a.score)
              .slice(0, prefetch.limit ?? 10);
            ranked.forEach(({ point }, rank) => {
              const entry = fused.get(String(point.id)) ?? { point, score: 0 };
              entry.score += 1 / (60 + rank + 1);
              fused.set(String(point.id), entry);
            });
          }
          const points = [...fused.values()]
            .filter(({ point }) => matches(point, body.filter, collection))
            .sort((a, b) => b.score - a.score)
            .slice(0, body.limit ?? 10)
            .map(({ point, score }) => ({ id: point.id, version: 0, score, payload: point.payload }));
          return ok(res, { points });
        }
        // One vector, named by `using` (dense or sparse), over the points the filter lets through.
        const query = body.query as number[] | Sparse;
        if (Array.isArray(query) && query.length !== collection.size) {
          return send(res, 400, {
            status: {
              error: `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${query.length}`,
            },
          });
        }
        const candidates = [...collection.points.values()].filter((point) => matches(point, body.filter, collection));
        const scored = candidates
          .map((point) => ({
            id: point.id,
            version: 0,
            score: scoreOf(collection, candidates, point, query, body.using ?? 'dense'),
            payload: body.with_payload === false ? undefined : point.payload,
          }))
          .filter(({ score }) => Array.isArray(query) || score > 0)
          .sort((a, b) => b.score - a.score)
          .slice(0, body.limit ?? 10);
        return ok(res, { points: scored });
      }
      case 'POST /points/count':
        return ok(res, { count: collection.points.size });
      case 'POST /points/delete': {
        for (const [id, point] of collection.points)
          if (matches(point, body.filter, collection)) collection.points.delete(id);
        return ok(res, { operation_id: requests.length, status: 'completed' });
      }
      default:
        return notFound(res, url.pathname);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    collections,
    requestsTo: (method, suffix) =>
      requests.filter((request) => request.method === method && request.path.endsWith(suffix)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The filter subset the store sends: `must` of key/match.value, match.any or match.text, `must_not`
 * of has_id. match.text as Qdrant does it: on a field with a full-text index, every token of the
 * query must be among the tokens of the field's values (the prefix tokenizer indexes each word's
 * prefixes, and reads the query as whole words); without one, every word of the query must be a
 * substring of a value.
 */
function matches(point: Point, filter: any, collection: Collection): boolean {
  for (const condition of filter?.must ?? []) {
    if (condition.has_id && !(condition.has_id as unknown[]).map(String).includes(String(point.id))) return false;
    if (condition.key === undefined) continue;
    const stored = point.payload[condition.key];
    const values = Array.isArray(stored) ? stored : [stored];
    if (typeof condition.match?.text === 'string') {
      if (!textMatches(values, condition.match.text, collection.payloadIndexes.get(condition.key))) return false;
      continue;
    }
    const wanted: unknown[] = condition.match?.any ?? [condition.match?.value];
    if (!values.some((value) => wanted.includes(value))) return false;
  }
  for (const condition of filter?.must_not ?? []) {
    if (condition.has_id && (condition.has_id as unknown[]).map(String).includes(String(point.id))) return false;
  }
  return true;
}

function textMatches(values: unknown[], query: string, index: string | TextIndex | undefined): boolean {
  const texts = values.filter((value): value is string => typeof value === 'string');
  if (typeof index !== 'object') {
    return query
      .split(/\s+/)
      .filter((word) => word !== '')
      .every((word) => texts.some((text) => text.includes(word)));
  }
  const indexed = new Set(texts.flatMap((text) => tokens(text, index, false)));
  const wanted = tokens(query, index, true);
  return wanted.length > 0 && wanted.every((token) => indexed.has(token));
}

/** A text index's tokens of `text`: words (or whitespace-separated pieces), cased and bounded as configured. */
function tokens(text: string, index: TextIndex, query: boolean): string[] {
  const words = (index.tokenizer === 'whitespace' ? text.split(/\s+/) : text.split(/[^\p{L}\p{N}]+/u)).filter(
    (word) => word !== '',
  );
  const cased = index.lowercase === false ? words : words.map((word) => word.toLowerCase());
  const min = index.min_token_len ?? 0;
  const max = index.max_token_len ?? Infinity;
  if (index.tokenizer !== 'prefix' || query) return cased.filter((word) => word.length >= min && word.length <= max);
  return cased.flatMap((word) => {
    const prefixes: string[] = [];
    for (let length = Math.max(min, 1); length <= Math.min(max, word.length); length++)
      prefixes.push(word.slice(0, length));
    return prefixes;
  });
}

function denseOf(point: Point): number[] {
  return Array.isArray(point.vector) ? point.vector : (point.vector.dense as number[]);
}

/** Cosine for a dense query; for a sparse one, Σ q·d over shared indices, times the IDF when the vector has the
 * modifier. */
function scoreOf(
  collection: Collection,
  candidates: readonly Point[],
  point: Point,
  query: number[] | Sparse,
  using: string,
): number {
  if (Array.isArray(query)) return cosine(query, denseOf(point));
  const stored = (Array.isArray(point.vector) ? undefined : point.vector[using]) as Sparse | undefined;
  if (!stored) return 0;
  const idf = collection.sparse[using]?.modifier === 'idf';
  let score = 0;
  query.indices.forEach((index, at) => {
    const position = stored.indices.indexOf(index);
    if (position === -1) return;
    let weight = 1;
    if (idf) {
      const n = candidates.length;
      const containing = candidates.filter((other) => {
        const vector = Array.isArray(other.vector) ? undefined : (other.vector[using] as Sparse | undefined);
        return vector?.indices.includes(index);
      }).length;
      weight = Math.log((n - containing + 0.5) / (containing + 0.5) + 1);
    }
    score += weight * query.values[at]! * stored.values[position]!;
  });
  return score;
}

function pick(payload: Record<string, unknown>, withPayload: unknown): Record<string, unknown> {
  if (!Array.isArray(withPayload)) return withPayload === false ? {} : payload;
  return Object.fromEntries(withPayload.map((key: string) => [key, payload[key]]));
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

function ok(res: ServerResponse, result: unknown): void {
  send(res, 200, { result, status: 'ok', time: 0.0001 });
}

function notFound(res: ServerResponse, path: string): void {
  send(res, 404, { status: { error: `fake-qdrant: no route ${path}` } });
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
