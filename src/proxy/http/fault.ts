/**
 * What every HTTP fault shares: its spec fields (probability, method, path glob), the small
 * behaviour interface each fault file implements, and its counters.
 *
 *   request ──▶ fault 1 ──▶ fault 2 ──▶ … ──▶ forward ──▶ response faults (in order) ──▶ client
 *                 │ draw (seeded) lost or no match: pass
 *                 │ won: delay (then go on) · answer / hang / reset (the exchange ends here)
 *                 │      or note a response action (applied after the upstream answered)
 *
 * A fault's settings are shared by every exchange; its random stream is its own per mapping, so
 * the same seed and the same sequence of requests give the same decisions.
 */
import { SpecReader } from '../faults/fault.js';
import { HTTP_FAULT_TYPES } from '../vocabulary.js';

export { HTTP_FAULT_TYPES };
export type HttpFaultType = (typeof HTTP_FAULT_TYPES)[number];

export interface ResolvedCommon {
  name: string;
  target: string | undefined;
  probability: number;
  methods: string[] | undefined;
  path: string | undefined;
}

/** A response as the upstream sent it, body read whole. */
export interface BufferedResponse {
  status: number;
  statusMessage: string;
  /** Raw header pairs, hop-by-hop and framing headers removed. */
  headers: Array<[string, string]>;
  body: Buffer;
}

/** What a fault does to a request whose draw it won. */
export type RequestAction =
  | { kind: 'delay'; ms: number }
  | { kind: 'answer'; status: number; headers: Array<[string, string]>; body: Buffer }
  | { kind: 'hang'; ms: number | undefined }
  | { kind: 'reset' }
  /** Forward, then call the fault's `response` once the upstream answered. */
  | { kind: 'after_response' };

export type ResponseAction =
  | { kind: 'replace'; response: BufferedResponse }
  /** Send the head and this many body bytes, then close the connection. */
  | { kind: 'cut'; afterBytes: number }
  /** Close the connection this long after forwarding, before any answer. */
  | { kind: 'cut_after_ms'; ms: number };

export interface HttpFaultBehaviour {
  request(): RequestAction;
  response?(response: BufferedResponse): ResponseAction;
  /** Needs the upstream's body as plain bytes (the request goes without Accept-Encoding). */
  readonly readsBody: boolean;
}

export interface HttpFaultCounters {
  name: string;
  type: HttpFaultType;
  /** The mapping it is limited to, or null for every mapping. */
  target: string | null;
  /** Whether it is in the current list. */
  active: boolean;
  /** Exchanges that reached it and matched its method and path. */
  requests: number;
  /** Of those, the ones it changed (its probability draw won, and the exchange was not what it would have been). */
  applications: number;
  /** The ones it let through (the draw lost). */
  passes: number;
  /**
   * Of the draws it won, the ones it could not act on: a response fault (malformed,
   * schema_mismatch, connection_drop, error with forward) whose upstream body was above 16 MiB,
   * which went through unchanged.
   */
  oversized: number;
  /**
   * Of the draws it won, the ones it met and left as they were: settings that change nothing (a
   * delay of 0 ms: its declaration's `inert`), or a condition the exchange did not meet (a cut at or
   * past the end of the body, no field to remove, the upstream's own answer again). Counted apart
   * so that `applications` stays what changed: requests = applications + passes + oversized + unchanged.
   */
  unchanged: number;
}

/** Reads the common fields; the fault's own reader reads the rest and calls `done()`. */
export function readCommon(reader: SpecReader): ResolvedCommon {
  const name = reader.optionalString('name') ?? reader.type;
  const probability = reader.number('probability', { min: 0, max: 1, default: 1, expected: 'a number in 0..1' });
  const method = reader.optionalString('method');
  const path = reader.optionalString('path');
  const target = reader.optionalString('target');
  const methods =
    method === undefined
      ? undefined
      : method
          .split(',')
          .map((m) => m.trim().toUpperCase())
          .filter(Boolean);
  if (methods && (methods.length === 0 || methods.some((m) => !/^[A-Z][A-Z0-9_-]*$/.test(m))))
    reader.fail('method', 'HTTP methods separated by commas, e.g. "GET,POST"');
  if (path !== undefined && !path.startsWith('/') && !path.startsWith('*'))
    reader.fail('path', 'a path glob starting with / or *, e.g. "/api/*"');
  return { name, target, probability, methods, path };
}

/** The common fields as a predicate on a request. */
export function requestMatcher(common: ResolvedCommon): (method: string, path: string) => boolean {
  const methods = common.methods;
  const glob = common.path === undefined ? undefined : globToRegExp(common.path);
  return (method, path) => (!methods || methods.includes(method)) && (!glob || glob.test(path));
}

export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** A JSON body with a content type, for answers the proxy makes up. */
export function jsonAnswer(status: number, value: unknown, extra: Array<[string, string]> = []): RequestAction {
  return {
    kind: 'answer',
    status,
    headers: [['content-type', 'application/json'], ...extra],
    body: Buffer.from(JSON.stringify(value)),
  };
}
