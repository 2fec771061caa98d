/** A client for a running proxy's admin API (what `faultline chaos` uses). */
import { ToolInputError } from '../../errors.js';

export interface AdminClientOptions {
  /** http://HOST:PORT of the admin API. */
  url: string;
  token: string;
  timeoutMs?: number;
}

export class AdminRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function adminRequest(options: AdminClientOptions, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  let base: URL;
  try {
    base = new URL(options.url.includes('://') ? options.url : `http://${options.url}`);
  } catch {
    throw new ToolInputError(`--admin ${options.url}: not a URL or HOST:PORT`);
  }
  let response: Response;
  try {
    response = await fetch(new URL(path, base), {
      method,
      headers: { authorization: `Bearer ${options.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (error) {
    throw new AdminRequestError(0, `cannot reach the admin API at ${base.origin}: ${(error as Error).cause ? String((error as { cause: unknown }).cause) : (error as Error).message}`);
  }
  const text = await response.text();
  let value: Record<string, unknown> = {};
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: reported below
  }
  if (!response.ok) throw new AdminRequestError(response.status, `admin API answered ${response.status}: ${typeof value['error'] === 'string' ? value['error'] : text.slice(0, 200)}`);
  return value;
}
