/**
 * A client for a running proxy's admin API (what `faultline chaos` uses). node:http rather than
 * fetch, which refuses the "bad ports" browsers block (e.g. 6000, 10080), where an admin API may
 * well listen.
 */
import http from 'node:http';
import type { LookupFunction } from 'node:net';
import { InputError } from '../../kernel/errors.js';

export interface AdminClientOptions {
  /** http://HOST:PORT of the admin API, or HOST:PORT. */
  url: string;
  token: string;
  timeoutMs?: number;
  /**
   * Resolves the API's host name at every connect: the target policy's lookup (targetLookup). An
   * experiment passes its policy's (a name read as 127.0.0.1 must not reach 169.254.169.254
   * later); `faultline chaos`, a person naming their own admin API, targetLookup(true).
   */
  lookup: LookupFunction;
}

/** The most of an answer read (the admin API's bodies are small; a stranger's may not be). */
const MAX_ANSWER_BYTES = 1024 * 1024;

function redact(text: string, token: string): string {
  return token === '' ? text : text.split(token).join('[token]');
}

export class AdminRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function adminRequest(
  options: AdminClientOptions,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  let base: URL;
  try {
    base = new URL(options.url.includes('://') ? options.url : `http://${options.url}`);
  } catch {
    throw new InputError(`--admin ${options.url}: not a URL or HOST:PORT`);
  }
  if (base.protocol !== 'http:') throw new InputError(`--admin ${options.url}: the admin API speaks http://`);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = http.request(
      new URL(path, base),
      {
        method,
        headers: {
          authorization: `Bearer ${options.token}`,
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
        timeout: options.timeoutMs ?? 10_000,
        lookup: options.lookup,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) request.destroy(new Error(`an answer over ${MAX_ANSWER_BYTES} bytes`));
        });
        // Whatever answers may echo the request's headers: the token never goes on into a report
        // or an error (an experiment's control url may be any local listener an agent picked).
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            text: redact(Buffer.concat(chunks).toString('utf8'), options.token),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('timeout', () =>
      request.destroy(new Error(`no answer within ${(options.timeoutMs ?? 10_000) / 1000} s`)),
    );
    request.on('error', (error: NodeJS.ErrnoException) =>
      reject(new AdminRequestError(0, `cannot reach the admin API at ${base.origin}: ${error.code ?? error.message}`)),
    );
    request.end(payload);
  });
  let value: Record<string, unknown> = {};
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: reported below
  }
  if (status < 200 || status >= 300)
    throw new AdminRequestError(
      status,
      `admin API answered ${status}: ${typeof value['error'] === 'string' ? value['error'] : text.slice(0, 200)}`,
    );
  return value;
}
