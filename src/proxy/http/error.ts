/**
 * error: answers `status_code` with `error_body` without calling the upstream (fault's http_error
 * calls it first, so side effects happen anyway); with `forward: true` the upstream is called and
 * its answer replaced.
 */
import type { SpecReader } from '../faults/fault.js';
import { HTTP_ERROR } from './error.declaration.js';
import { readCommon, type BufferedResponse, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpErrorSpec extends ResolvedCommon {
  type: 'error';
  status_code: number;
  error_body: string;
  /** mcp-chaos-monkey's message, when given (a Redis error reply says it). */
  message: string | undefined;
  forward: boolean;
}

export function readHttpError(reader: SpecReader): HttpErrorSpec {
  const common = readCommon(reader);
  const { status_code, error_body, message, forward } = reader.declared(HTTP_ERROR.fields) as {
    status_code: number;
    error_body: string | undefined;
    message: string | undefined;
    forward: boolean;
  };
  const spec: HttpErrorSpec = {
    type: 'error',
    ...common,
    status_code,
    // mcp-chaos-monkey's `message` becomes its body shape: {"error": message}.
    error_body: error_body ?? JSON.stringify({ error: message ?? 'faultline injected error' }),
    message,
    forward,
  };
  reader.done();
  return spec;
}

export function httpError(spec: HttpErrorSpec): HttpFaultBehaviour {
  const body = Buffer.from(spec.error_body);
  const headers: Array<[string, string]> = [
    ['content-type', looksLikeJson(spec.error_body) ? 'application/json' : 'text/plain; charset=utf-8'],
  ];
  const answer = (): BufferedResponse => ({ status: spec.status_code, statusMessage: '', headers: [...headers], body });
  return {
    readsBody: false,
    request: () =>
      spec.forward ? { kind: 'after_response' } : { kind: 'answer', status: spec.status_code, headers, body },
    response: () => ({ kind: 'replace', response: answer() }),
  };
}

function looksLikeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
