/**
 * The admin API of a running proxy: mcp-chaos-monkey's routes and payloads, so its users' scripts
 * work unchanged, served over HTTP on loopback (by default) behind a bearer token.
 *
 *   GET  /chaos/status     → {"faults":[{"id","target","type","requestCount","unit"}]}
 *   POST /chaos/inject     {target, config, durationMs?} → {"faultId"}
 *   POST /chaos/clear      {faultId} → {"cleared": id}; an unknown id is 404 (not a success)
 *   POST /chaos/clear-all  → {"cleared": "all"}
 *   GET  /metrics          → Prometheus text format (when the owner gives a registry: src/metrics/)
 *
 * A missing or wrong token is 401 with WWW-Authenticate: Bearer (jsonrpc/bearer.ts, the one check
 * every faultline HTTP door makes), bad input 400 naming the field, unknown route 404, wrong method 405. Bodies
 * above 64 KiB are refused. snake_case spellings (fault_id, duration_ms) are accepted too.
 */
import http from 'node:http';
import { InputError, messageOf } from '../../kernel/errors.js';
import { unknownKeysProblem } from '../../config-reader.js';
import type { FaultControl } from './registry.js';
import { requireBearer } from '../../jsonrpc/bearer.js';
import { readJsonBody } from '../../jsonrpc/http-body.js';
import { listenHttp, type Listening } from '../../jsonrpc/listen.js';
import type { Registry as MetricsRegistry } from 'prom-client';

export const MAX_ADMIN_BODY = 64 * 1024;

export interface AdminOptions {
  host: string;
  port: number;
  token: string;
  registry: FaultControl;
  log?: (line: string) => void;
  /** Served as GET /metrics behind the same token (src/metrics/registerProxyMetrics fills it). */
  metrics?: MetricsRegistry;
}

/** A /metrics answer: text, not JSON. */
class MetricsText {
  constructor(
    readonly body: string,
    readonly contentType: string,
  ) {}
}

/** Its URL (no path), bound port and close. */
export type AdminServer = Listening;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startAdmin(options: AdminOptions): Promise<AdminServer> {
  const server = http.createServer(adminHandler(options));
  server.requestTimeout = 10_000;
  return listenHttp(server, {
    ...options,
    refusal: (error) =>
      new InputError(`--admin ${options.host}:${options.port}: cannot listen (${error.code ?? error.message})`),
  });
}

/**
 * The admin API's request handler, for a server of its own (startAdmin) or mounted on another
 * door's port (the Toxiproxy API sends it /chaos/…).
 */
export function adminHandler(options: Omit<AdminOptions, 'host' | 'port'>): http.RequestListener {
  if (!options.token) throw new InputError('the admin API needs a token (--admin-token or FAULTLINE_ADMIN_TOKEN)');
  const log = options.log ?? (() => {});
  const registry = options.registry;
  return (req, res) => {
    const send = (status: number, value: unknown): void => {
      if (value instanceof MetricsText) {
        res.writeHead(status, { 'content-type': value.contentType, 'content-length': Buffer.byteLength(value.body) });
        res.end(value.body);
        return;
      }
      const body = JSON.stringify(value);
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    };
    if (!requireBearer(req, res, options.token)) return;
    handle(req, res, registry, log)
      .then(([status, value]) => send(status, value))
      .catch((error: unknown) => {
        if (error instanceof HttpError) send(error.status, { error: error.message });
        else if (error instanceof InputError) send(400, { error: error.message });
        else {
          log(`admin: internal error: ${messageOf(error)}`);
          send(500, { error: 'internal error' });
        }
      });
  };

  async function handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    registry: FaultControl,
    log: (line: string) => void,
  ): Promise<[number, unknown]> {
    const path = (req.url ?? '/').split('?')[0];
    const routes: Record<string, string> = {
      '/chaos/status': 'GET',
      '/chaos/inject': 'POST',
      '/chaos/clear': 'POST',
      '/chaos/clear-all': 'POST',
      ...(options.metrics ? { '/metrics': 'GET' } : {}),
    };
    const method = path ? routes[path] : undefined;
    if (!method)
      throw new HttpError(
        404,
        `no route ${path}; routes: GET /chaos/status, POST /chaos/inject, /chaos/clear, /chaos/clear-all`,
      );
    if (req.method !== method) throw new HttpError(405, `${path} takes ${method}`);
    if (path === '/metrics' && options.metrics) {
      req.resume();
      return [200, new MetricsText(await options.metrics.metrics(), options.metrics.contentType)];
    }
    if (path === '/chaos/status') {
      req.resume();
      return [200, { faults: registry.status() }];
    }
    const body = await readJsonObject(req, res);
    switch (path) {
      case '/chaos/inject': {
        // A misspelt key (`duration`, `ttl`) would otherwise leave a fault on for good.
        refuseUnknownKeys(body, ['target', 'config', 'durationMs', 'duration_ms'], path);
        const durationMs = body['durationMs'] ?? body['duration_ms'];
        const id = registry.inject(body['target'], body['config'], durationMs);
        log(`admin: injected ${id}`);
        return [200, { faultId: id }];
      }
      case '/chaos/clear': {
        refuseUnknownKeys(body, ['faultId', 'fault_id'], path);
        const id = body['faultId'] ?? body['fault_id'];
        if (typeof id !== 'string' || id === '') throw new HttpError(400, 'faultId: the id /chaos/inject returned');
        if (!registry.clear(id))
          throw new HttpError(404, `no active fault ${JSON.stringify(id)} (it may have expired)`);
        return [200, { cleared: id }];
      }
      default:
        registry.clearAll();
        return [200, { cleared: 'all' }];
    }
  }
}

function refuseUnknownKeys(body: Record<string, unknown>, accepted: readonly string[], route: string): void {
  const problem = unknownKeysProblem(body, accepted, `${route} body`);
  if (problem !== undefined) throw new HttpError(400, problem);
}

async function readJsonObject(req: http.IncomingMessage, res: http.ServerResponse): Promise<Record<string, unknown>> {
  const read = await readJsonBody(req, res, { maxBytes: MAX_ADMIN_BODY, empty: {} });
  if (!read.ok)
    throw new HttpError(read.status, read.status === 413 ? read.problem : `the body is not JSON: ${read.problem}`);
  const value = read.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, 'the body must be a JSON object');
  return value as Record<string, unknown>;
}
