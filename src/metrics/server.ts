/**
 * A listener that serves only GET /metrics, for a process without a control API of its own (the
 * experiment runner): loopback unless the bind rule allows more, behind a bearer token when one
 * is given (jsonrpc/bearer.ts: the one check every HTTP door makes, 401 when missing or wrong).
 */
import http from 'node:http';
import type { Registry } from 'prom-client';
import { InputError, messageOf } from '../kernel/errors.js';
import { requireBearer } from '../jsonrpc/bearer.js';
import { listenHttp } from '../jsonrpc/listen.js';
import { bindRefusal, type BindRule } from '../target-policy.js';
import { sendMetrics } from './exposition.js';

export interface MetricsServerOptions {
  host: string;
  port: number;
  token: string | undefined;
  registry: Registry;
  bind: BindRule;
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const refusal = bindRefusal(options.host, options.bind);
  if (refusal) throw new InputError(refusal);
  const server = http.createServer((req, res) => {
    const answer = (status: number, text: string): void => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${text}\n`);
    };
    req.resume();
    if (options.token && !requireBearer(req, res, options.token)) return;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return answer(404, 'only GET /metrics here');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, '/metrics takes GET');
    sendMetrics(options.registry, res).catch((error: unknown) => answer(500, messageOf(error)));
  });
  server.requestTimeout = 10_000;
  const { url, close } = await listenHttp(server, {
    ...options,
    refusal: (error) =>
      new InputError(`--metrics ${options.host}:${options.port}: cannot listen (${error.code ?? error.message})`),
  });
  return { url: `${url}/metrics`, close };
}
