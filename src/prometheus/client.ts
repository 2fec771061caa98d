/**
 * A small client of Prometheus's HTTP API: `/api/v1/query` (one instant) and `/api/v1/query_range`
 * (a window, one value per step). Bounded: each call has a timeout and reads at most
 * MAX_ANSWER_BYTES; the socket resolves names through the target policy's lookup, so the address
 * is checked again at connect time. Credentials come from the environment (auth.ts), never from a
 * file. It answers the API's own outcome, never throws on the server's word: an unreachable
 * server, an HTTP error, a query error (`bad_data`) and an empty result are all told apart, so a
 * caller can say "inconclusive" rather than "passed" when nothing was measured.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { PrometheusAuth } from './auth.js';

/** The most of one answer read (a query over many series is refused rather than buffered). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
export const DEFAULT_QUERY_TIMEOUT_MS = 2000;

/** One series' value at one instant; `labels` as Prometheus names them (`__name__` included when present). */
export interface Sample {
  labels: Record<string, string>;
  /** Seconds since the epoch, as Prometheus gives it. */
  time: number;
  /** NaN and ±Inf as Prometheus writes them ("NaN", "+Inf"). */
  value: number;
}

export type QueryOutcome =
  /** The query ran: zero or more samples (a scalar is one sample without labels). */
  | { ok: true; samples: Sample[] }
  /**
   * It did not: `unreachable` (no connection, a timeout, an answer too big or not the API's),
   * `query` (Prometheus refused the query: bad_data, execution, timeout on its side), `http`
   * (another status, e.g. 401 without the right credentials).
   */
  | { ok: false; kind: 'unreachable' | 'query' | 'http'; message: string };

export interface PrometheusClientOptions {
  /** The server's base URL (`http://127.0.0.1:9090`, or with a path prefix `…/prometheus`). */
  url: string;
  /** How names are resolved at connect time (the target policy's lookup). */
  lookup?: LookupFunction;
  auth?: PrometheusAuth;
  timeoutMs?: number;
}

export class PrometheusClient {
  private readonly base: URL;
  private readonly timeoutMs: number;

  constructor(private readonly options: PrometheusClientOptions) {
    this.base = new URL(options.url.endsWith('/') ? options.url : `${options.url}/`);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  }

  /** The query evaluated at `at` (default now). */
  query(query: string, at?: Date, signal?: AbortSignal): Promise<QueryOutcome> {
    const params = new URLSearchParams({ query });
    if (at) params.set('time', (at.getTime() / 1000).toFixed(3));
    return this.call('api/v1/query', params, signal);
  }

  /** The query evaluated every `stepMs` from `from` to `to`: each series' values, flattened into samples. */
  queryRange(query: string, from: Date, to: Date, stepMs: number, signal?: AbortSignal): Promise<QueryOutcome> {
    const params = new URLSearchParams({
      query,
      start: (from.getTime() / 1000).toFixed(3),
      end: (to.getTime() / 1000).toFixed(3),
      step: `${Math.max(1, Math.round(stepMs)) / 1000}s`,
    });
    return this.call('api/v1/query_range', params, signal);
  }

  private async call(path: string, params: URLSearchParams, signal?: AbortSignal): Promise<QueryOutcome> {
    const url = new URL(path, this.base);
    let answer: { status: number; body: string };
    try {
      answer = await this.post(url, params.toString(), signal);
    } catch (error) {
      return { ok: false, kind: 'unreachable', message: `${this.base.origin}: ${(error as Error).message}` };
    }
    return interpret(answer.status, answer.body);
  }

  private post(url: URL, body: string, signal?: AbortSignal): Promise<{ status: number; body: string }> {
    const headers: Record<string, string | number> = {
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': Buffer.byteLength(body),
      accept: 'application/json',
      connection: 'close',
    };
    const authorization = authorizationOf(this.options.auth);
    if (authorization) headers.authorization = authorization;
    return new Promise((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers,
        agent: false,
        ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
      });
      let settled = false;
      const finish = (error: Error | undefined, value?: { status: number; body: string }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error) {
          request.destroy();
          reject(error);
        } else resolve(value!);
      };
      const timer = setTimeout(() => finish(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      const onAbort = (): void => finish(new Error('cancelled'));
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error: NodeJS.ErrnoException) =>
        finish(new Error(error.code === 'ENOTLOCAL' ? error.message : (error.code ?? error.message))),
      );
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            finish(new Error(`the answer is above ${MAX_ANSWER_BYTES} bytes; narrow the query`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', (error) => finish(error));
        response.on('end', () =>
          finish(undefined, { status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      });
      request.end(body);
    });
  }
}

function authorizationOf(auth: PrometheusAuth | undefined): string | undefined {
  if (!auth) return undefined;
  if (auth.kind === 'bearer') return `Bearer ${auth.token}`;
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
}

interface ApiAnswer {
  status?: unknown;
  errorType?: unknown;
  error?: unknown;
  data?: { resultType?: unknown; result?: unknown };
}

/** The API's answer read: its status field decides, not only the HTTP status (422 and 400 carry query errors). */
export function interpret(status: number, body: string): QueryOutcome {
  let answer: ApiAnswer;
  try {
    answer = JSON.parse(body) as ApiAnswer;
  } catch {
    return {
      ok: false,
      kind: status >= 200 && status < 300 ? 'unreachable' : 'http',
      // The body is not quoted: whatever answered is not Prometheus, and its text is not ours to relay.
      message: `HTTP ${status}, not the Prometheus API's JSON (${Buffer.byteLength(body)} bytes)`,
    };
  }
  if (typeof answer !== 'object' || answer === null)
    return { ok: false, kind: 'unreachable', message: `HTTP ${status}: not the Prometheus API's answer` };
  if (answer.status === 'error') {
    const type = String(answer.errorType ?? 'error');
    const queryError = ['bad_data', 'execution', 'timeout', 'canceled'].includes(type);
    return {
      ok: false,
      kind: queryError ? 'query' : 'http',
      message: `${type}: ${String(answer.error ?? `HTTP ${status}`)}`,
    };
  }
  if (status < 200 || status >= 300 || answer.status !== 'success')
    return { ok: false, kind: 'http', message: `HTTP ${status}` };
  const samples = samplesOf(answer.data?.resultType, answer.data?.result);
  if (samples === undefined)
    return { ok: false, kind: 'query', message: `the query answered ${String(answer.data?.resultType)}, not a number` };
  return { ok: true, samples };
}

function numberOf(text: unknown): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

function pairOf(value: unknown): { time: number; value: number } | undefined {
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  return { time: Number(value[0]), value: numberOf(value[1]) };
}

/** Vector, matrix and scalar results as samples; a string result is not a number (undefined). */
function samplesOf(type: unknown, result: unknown): Sample[] | undefined {
  if (type === 'scalar') {
    const pair = pairOf(result);
    return pair ? [{ labels: {}, ...pair }] : [];
  }
  if (!Array.isArray(result)) return type === 'vector' || type === 'matrix' ? [] : undefined;
  const samples: Sample[] = [];
  for (const series of result as Array<{ metric?: Record<string, string>; value?: unknown; values?: unknown }>) {
    const labels = { ...(series.metric ?? {}) };
    if (type === 'vector') {
      const pair = pairOf(series.value);
      if (pair) samples.push({ labels, ...pair });
    } else if (type === 'matrix' && Array.isArray(series.values)) {
      for (const value of series.values) {
        const pair = pairOf(value);
        if (pair) samples.push({ labels, ...pair });
      }
    } else return undefined;
  }
  return samples;
}

/** A series named as PromQL writes it: `http_requests_total{code="500"}`. */
export function seriesName(labels: Record<string, string>): string {
  const { __name__: name, ...rest } = labels;
  const pairs = Object.entries(rest).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return `${name ?? ''}${pairs.length > 0 ? `{${pairs.join(',')}}` : name ? '' : '{}'}`;
}
