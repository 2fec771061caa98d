/**
 * A local HTTP server implementing the part of Qdrant's REST API that src/index/qdrant-store.ts
 * calls through @qdrant/js-client-rest, with real semantics for what the tests check: collections
 * with a fixed vector size, upsert by id, cosine query, scroll with paging, count, delete by
 * filter (`must` path match, `must_not` has_id), keyword payload indexes. Every request is
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

interface Point {
  id: string | number;
  vector: number[];
  payload: Record<string, unknown>;
}

interface Collection {
  size: number;
  points: Map<string, Point>;
  payloadIndexes: Map<string, string>;
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
    void handle(req, res).catch((error: unknown) => send(res, 500, { status: { error: `fake-qdrant: ${(error as Error).message}` } }));
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
      if (collection) return send(res, 409, { status: { error: `Wrong input: Collection \`${name}\` already exists!` } });
      collections.set(name, { size: body.vectors.size, points: new Map(), payloadIndexes: new Map() });
      return ok(res, true);
    }
    if (!collection) return send(res, 404, { status: { error: `Not found: Collection \`${name}\` doesn't exist!` } });
    switch (route) {
      case 'GET ':
        return ok(res, {
          status: 'green',
          points_count: collection.points.size,
          config: { params: { vectors: { size: collection.size, distance: 'Cosine' } } },
          payload_schema: Object.fromEntries([...collection.payloadIndexes].map(([field, type]) => [field, { data_type: type }])),
        });
      case 'PUT /index':
        collection.payloadIndexes.set(body.field_name, body.field_schema);
        return ok(res, { operation_id: requests.length, status: 'completed' });
      case 'PUT /points': {
        for (const point of body.points as Point[]) {
          if (point.vector.length !== collection.size) {
            return send(res, 400, {
              status: { error: `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${point.vector.length}` },
            });
          }
        }
        for (const point of body.points as Point[]) collection.points.set(String(point.id), point);
        return ok(res, { operation_id: requests.length, status: 'completed' });
      }
      case 'POST /points/scroll': {
        const all = [...collection.points.values()].sort((a, b) => String(a.id).localeCompare(String(b.id)));
        const limit = Math.min(body.limit ?? 10, options.scrollPage ?? Infinity);
        const start = body.offset === undefined || body.offset === null ? 0 : all.findIndex((point) => String(point.id) === String(body.offset));
        const page = all.slice(start, start + limit);
        const next = all[start + limit];
        return ok(res, {
          points: page.map((point) => ({ id: point.id, payload: pick(point.payload, body.with_payload) })),
          next_page_offset: next ? next.id : null,
        });
      }
      case 'POST /points/query': {
        const query = body.query as number[];
        if (query.length !== collection.size) {
          return send(res, 400, { status: { error: `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${query.length}` } });
        }
        const scored = [...collection.points.values()]
          .map((point) => ({ id: point.id, version: 0, score: cosine(query, point.vector), payload: point.payload }))
          .sort((a, b) => b.score - a.score)
          .slice(0, body.limit ?? 10);
        return ok(res, { points: scored });
      }
      case 'POST /points/count':
        return ok(res, { count: collection.points.size });
      case 'POST /points/delete': {
        for (const [id, point] of collection.points) if (matches(point, body.filter)) collection.points.delete(id);
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
    requestsTo: (method, suffix) => requests.filter((request) => request.method === method && request.path.endsWith(suffix)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The filter subset the store sends: `must` of key/match.value, `must_not` of has_id. */
function matches(point: Point, filter: any): boolean {
  for (const condition of filter?.must ?? []) {
    if (condition.key !== undefined && point.payload[condition.key] !== condition.match?.value) return false;
  }
  for (const condition of filter?.must_not ?? []) {
    if (condition.has_id && (condition.has_id as unknown[]).map(String).includes(String(point.id))) return false;
  }
  return true;
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
