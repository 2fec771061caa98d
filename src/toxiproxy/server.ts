/**
 * Toxiproxy's HTTP API, served by faultline: the routes, status codes, JSON shapes and error
 * messages a Toxiproxy client meets (docs/toxiproxy.md lists what differs, and why).
 *
 *   GET /proxies · POST /proxies · POST /populate · POST /reset · GET /version · GET /metrics
 *   GET|POST|PATCH|DELETE /proxies/{proxy}
 *   GET|POST /proxies/{proxy}/toxics · GET|POST|PATCH|DELETE /proxies/{proxy}/toxics/{toxic}
 *   GET /proxies/{proxy}/counters  (faultline's: the proxy's counters, every fault's included)
 *   GET /chaos/status · POST /chaos/inject|clear|clear-all  (with a token: the admin API, chaos.ts)
 *
 * Errors: `{"error": message, "status": code}` and a newline, as text/plain (Toxiproxy's
 * http.Error); an unknown route 404 `404 page not found`; a known route with another method 405;
 * a browser (User-Agent `Mozilla/…`) 403, as Toxiproxy guards against cross-site requests.
 */
import http from 'node:http';
import { messageOf } from '../kernel/errors.js';
import { VERSION } from '../version.js';
import { adminHandler } from '../proxy/control/admin.js';
import { listenHttp } from '../jsonrpc/listen.js';
import { tokenRefusal } from './auth.js';
import { ToxicChaos } from './chaos.js';
import { toxiproxyMetrics } from './metrics.js';
import { ApiError, ProxyCollection, type CollectionOptions } from './proxies.js';
import { refuseInProduction } from '../production.js';

/** The largest request body read (a /populate of a few thousand proxies fits). */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface ToxiproxyServerOptions extends CollectionOptions {
  host: string;
  port: number;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string | undefined;
}

export interface ToxiproxyServer {
  url: string;
  port: number;
  collection: ProxyCollection;
  /** Stops the API and every proxy; resolves once no port is left open. */
  close(): Promise<void>;
}

interface Answer {
  status: number;
  body?: unknown;
  /** Sent as it is (the version line, metrics). */
  raw?: { text: string; contentType: string };
}

export async function startToxiproxyServer(options: ToxiproxyServerOptions): Promise<ToxiproxyServer> {
  // Its proxies exist to take toxics: refused where the environment says production, as each proxy's start is.
  refuseInProduction('serve the Toxiproxy API', options.allowProduction === true);
  const collection = new ProxyCollection(options);
  const metrics = toxiproxyMetrics(collection);
  const log = options.log ?? (() => {});
  // With a token, the admin API's /chaos routes on the same port, over the same proxies (chaos.ts).
  const chaos = options.token ? new ToxicChaos(collection) : undefined;
  const chaosRoutes = chaos && options.token ? adminHandler({ token: options.token, registry: chaos, log }) : undefined;
  const server = http.createServer((req, res) => {
    if (chaosRoutes && (req.url ?? '').startsWith('/chaos/')) return chaosRoutes(req, res);
    respond(req)
      .then((answer) => send(res, answer))
      .catch((error: unknown) => {
        if (error instanceof ApiError) return sendError(res, error.status, error.message);
        log(`toxiproxy: internal error: ${messageOf(error)}`);
        sendError(res, 500, messageOf(error));
      });
  });
  server.requestTimeout = 30_000;

  async function respond(req: http.IncomingMessage): Promise<Answer> {
    if ((req.headers['user-agent'] ?? '').startsWith('Mozilla/')) {
      req.resume();
      return { status: 403, raw: { text: 'User agent not allowed\n', contentType: 'text/plain; charset=utf-8' } };
    }
    const refusal = tokenRefusal(req, options.token);
    if (refusal !== undefined) {
      req.resume();
      throw new ApiError(401, refusal);
    }
    const route = routeOf(req.method ?? 'GET', (req.url ?? '/').split('?')[0]!);
    if (route === 'not found') {
      req.resume();
      return { status: 404, raw: { text: '404 page not found\n', contentType: 'text/plain; charset=utf-8' } };
    }
    if (route === 'method') {
      req.resume();
      return { status: 405 };
    }
    if (!route.body) {
      req.resume();
      return route.run(undefined);
    }
    let body: unknown;
    try {
      body = await readBody(req);
    } catch (error) {
      // /populate answers every error with the proxies it made (none here), as Toxiproxy does.
      if (route.populate && error instanceof ApiError) return populateError(error);
      throw error;
    }
    return route.run(body);
  }

  function routeOf(method: string, path: string): Route | 'not found' | 'method' {
    const parts = path.split('/').slice(1).map(decodeSegment);
    const key = parts.length === 1 ? parts[0] : parts[0] === 'proxies' ? `proxies/${parts.length}` : '';
    const routes = key !== undefined ? table(parts)[key] : undefined;
    if (!routes || Object.keys(routes).length === 0 || parts.some((part) => part === undefined || part === ''))
      return 'not found';
    return routes[method] ?? 'method';
  }

  function table(parts: Array<string | undefined>): Record<string, Record<string, Route>> {
    const [, proxy = '', third, toxic = ''] = parts;
    const one = (run: Route['run'], body = false, populate = false): Route => ({ run, body, populate });
    return {
      proxies: {
        GET: one(async () => ({
          status: 200,
          body: Object.fromEntries(collection.all().map((p) => [p.name, p.json()])),
        })),
        POST: one(
          (body) => collection.serial(async () => ({ status: 201, body: (await collection.create(body)).json() })),
          true,
        ),
      },
      populate: { POST: one((body) => collection.serial(() => populate(body)), true, true) },
      reset: { POST: one(() => collection.serial(async () => (await collection.reset(), { status: 204 }))) },
      version: {
        GET: one(async () => ({
          status: 200,
          raw: { text: `{"version": "${VERSION}"}\n`, contentType: 'application/json;charset=utf-8' },
        })),
      },
      metrics: {
        GET: one(async () => ({
          status: 200,
          raw: { text: await metrics.render(), contentType: metrics.contentType },
        })),
      },
      'proxies/2': {
        GET: one(async () => ({ status: 200, body: collection.get(proxy).json() })),
        POST: one(
          (body) =>
            collection.serial(async () => ({ status: 200, body: (await collection.update(proxy, body)).json() })),
          true,
        ),
        PATCH: one(
          (body) =>
            collection.serial(async () => ({ status: 200, body: (await collection.update(proxy, body)).json() })),
          true,
        ),
        DELETE: one(() => collection.serial(async () => (await collection.remove(proxy), { status: 204 }))),
      },
      'proxies/3':
        third === 'toxics'
          ? {
              GET: one(async () => ({ status: 200, body: collection.get(proxy).toxicList() })),
              POST: one(
                (body) => collection.serial(() => ({ status: 200, body: collection.addToxic(proxy, body) })),
                true,
              ),
            }
          : third === 'counters'
            ? { GET: one(async () => ({ status: 200, body: collection.get(proxy).counters() ?? null })) }
            : {},
      'proxies/4':
        third === 'toxics'
          ? {
              GET: one(async () => ({ status: 200, body: toxicOf(proxy, toxic) })),
              POST: one(
                (body) => collection.serial(() => ({ status: 200, body: collection.updateToxic(proxy, toxic, body) })),
                true,
              ),
              PATCH: one(
                (body) => collection.serial(() => ({ status: 200, body: collection.updateToxic(proxy, toxic, body) })),
                true,
              ),
              DELETE: one(() => collection.serial(() => (collection.removeToxic(proxy, toxic), { status: 204 }))),
            }
          : {},
    };
  }

  function toxicOf(proxy: string, name: string): unknown {
    const toxic = collection
      .get(proxy)
      .toxicList()
      .find((t) => t.name === name);
    if (!toxic) throw new ApiError(404, 'toxic not found');
    return toxic;
  }

  async function populate(body: unknown): Promise<Answer> {
    try {
      const { proxies, error } = await collection.populate(body);
      const listed = proxies.length > 0 ? proxies.map((p) => p.json()) : null;
      if (error) return { status: error.status, body: { error: error.message, status: error.status, proxies: listed } };
      return { status: 201, body: { proxies: listed } };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return populateError(error);
    }
  }

  function populateError(error: ApiError): Answer {
    return { status: error.status, body: { error: error.message, status: error.status, proxies: null } };
  }

  const listening = await listenHttp(server, {
    ...options,
    refusal: (error) =>
      new ApiError(
        500,
        error.code === 'EADDRINUSE'
          ? `cannot serve the Toxiproxy API on ` +
              `${options.host}:${options.port}: the address is already in use ` +
              `(EADDRINUSE)`
          : `cannot serve the Toxiproxy API on ${options.host}:${options.port}: ${error.message}`,
      ),
  });
  return {
    url: listening.url,
    port: listening.port,
    collection,
    async close() {
      const closed = listening.close();
      chaos?.dispose();
      await Promise.all([closed, collection.close()]);
    },
  };
}

interface Route {
  run(body: unknown): Promise<Answer> | Answer;
  /** Reads a JSON body. */
  body: boolean;
  /** /populate: errors carry `proxies`. */
  populate: boolean;
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The request's JSON body; Toxiproxy's `bad request body: …` when it is not JSON (an empty one is EOF). */
async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, `bad request body: above ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new ApiError(400, 'bad request body: EOF');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, `bad request body: ${messageOf(error)}`);
  }
}

function send(res: http.ServerResponse, answer: Answer): void {
  if (answer.raw) {
    res.writeHead(answer.status, {
      'content-type': answer.raw.contentType,
      'content-length': Buffer.byteLength(answer.raw.text),
    });
    res.end(answer.raw.text);
    return;
  }
  if (answer.body === undefined) {
    res.writeHead(answer.status, answer.status === 204 ? {} : { 'content-length': 0 });
    res.end();
    return;
  }
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: http.ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = `${JSON.stringify({ error: message, status })}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(text),
    ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  res.end(text);
}
