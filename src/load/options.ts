/**
 * The options both load modes accept, their validation, and the resolved target they produce.
 * Every check throws an InputError that names the argument and what is accepted.
 */
import { isIP, type LookupFunction } from 'node:net';
import { InputError } from '../kernel/errors.js';
import { targetLookup, type TargetAllowance } from '../target-policy.js';

/** Where and what to send. */
export interface LoadTarget {
  /** http:// or https:// URL; its host gives the Host header and the TLS server name. */
  url: string;
  /** Connect here instead of the URL's host and port (e.g. a fault proxy in front of `url`). */
  connectTo?: { host: string; port: number };
  /** HTTP method (default GET). */
  method?: string;
  /** Request body, sent as given; a non-empty body adds `content-type: application/json` unless `headers` names a
   * content type (fault's rule). */
  body?: string;
  /** Extra request headers. A `host` header here replaces the URL's. */
  headers?: Record<string, string>;
  /** For https URLs: verify the certificate (default true) against these CAs (default Node's). */
  tls?: { rejectUnauthorized?: boolean; ca?: string | Buffer };
  /**
   * Connect only where the target policy allows (target-policy.ts): a host name is resolved at
   * every connect and refused (ENOTLOCAL) when an address is not allowed, so DNS rebinding cannot
   * redirect the load. Data rather than a lookup function, since the run happens on another
   * thread and a function cannot be sent there. Absent: no check (tests that load a fixture).
   */
  targets?: TargetAllowance;
}

export interface ResolvedTarget {
  url: URL;
  secure: boolean;
  connectHost: string;
  connectPort: number;
  /** The URL's host name without IPv6 brackets: the name the certificate must carry. */
  hostname: string;
  /** SNI server name: the URL's host name, or undefined when it is an IP address (RFC 6066). */
  servername: string | undefined;
  method: string;
  /** Path and query, as sent on the request line. */
  path: string;
  hostHeader: string;
  headers: [string, string][];
  body: Buffer;
  rejectUnauthorized: boolean;
  ca: string | Buffer | undefined;
  lookup: LookupFunction | undefined;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Headers the client owns: it frames every request itself and keeps connections alive. */
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'upgrade']);

export function resolveTarget(target: LoadTarget): ResolvedTarget {
  if (typeof target.url !== 'string' || target.url.trim() === '') {
    throw new InputError('url must be an http:// or https:// URL');
  }
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    throw new InputError(`url ${JSON.stringify(target.url)} is not a valid URL; give an http:// or https:// URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InputError(
      `url ${JSON.stringify(target.url)} uses ${url.protocol}; only http:// and https:// are accepted`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new InputError('url must not carry credentials; pass an authorization header in headers instead');
  }
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const urlPort = url.port === '' ? (secure ? 443 : 80) : Number(url.port);

  let connectHost = hostname;
  let connectPort = urlPort;
  if (target.connectTo !== undefined) {
    const { host, port } = target.connectTo ?? {};
    if (typeof host !== 'string' || host === '') {
      throw new InputError('connectTo.host must be a non-empty host name or IP address');
    }
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new InputError(`connectTo.port must be an integer from 1 to 65535, got ${String(port)}`);
    }
    connectHost = host.replace(/^\[(.*)\]$/, '$1');
    connectPort = port;
  }

  const method =
    typeof target.method === 'string' ? target.method.toUpperCase() : target.method === undefined ? 'GET' : '';
  if (!TOKEN.test(method)) {
    throw new InputError(
      `method ${JSON.stringify(target.method)} is not an HTTP method; use e.g. GET, POST, PUT, DELETE`,
    );
  }

  const headers: [string, string][] = [];
  let hostHeader = url.host;
  let hasContentType = false;
  if (target.headers !== undefined) {
    if (target.headers === null || typeof target.headers !== 'object' || Array.isArray(target.headers)) {
      throw new InputError('headers must be an object of header names to string values');
    }
    for (const [name, value] of Object.entries(target.headers)) {
      if (!TOKEN.test(name)) throw new InputError(`headers: ${JSON.stringify(name)} is not a valid header name`);
      if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
        throw new InputError(`headers.${name} must be a string without CR, LF or NUL`);
      }
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower)) {
        throw new InputError(
          `headers.${name} is set by the load generator and cannot be given ` +
            `(it frames requests and keeps connections alive)`,
        );
      }
      if (lower === 'host') hostHeader = value;
      else headers.push([name, value]);
      if (lower === 'content-type') hasContentType = true;
    }
  }

  if (target.body !== undefined && typeof target.body !== 'string') {
    throw new InputError('body must be a string (e.g. a JSON document)');
  }
  const body = Buffer.from(target.body ?? '', 'utf8');
  if (body.length > 0 && !hasContentType) headers.push(['content-type', 'application/json']);

  if (target.targets !== undefined && (typeof target.targets !== 'object' || target.targets === null))
    throw new InputError('targets must be a target allowance');
  const tls = target.tls ?? {};
  if (tls.rejectUnauthorized !== undefined && typeof tls.rejectUnauthorized !== 'boolean') {
    throw new InputError('tls.rejectUnauthorized must be true or false');
  }

  return {
    url,
    secure,
    connectHost,
    connectPort,
    hostname,
    servername: isIP(hostname) === 0 ? hostname : undefined,
    method,
    path: url.pathname + url.search,
    hostHeader,
    headers,
    body,
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
    ca: tls.ca,
    lookup: target.targets !== undefined ? targetLookup(target.targets) : undefined,
  };
}

/** A finite number > 0 (and ≤ max when given), or an InputError naming it. */
export function requirePositive(name: string, value: unknown, max?: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InputError(`${name} must be a number greater than 0, got ${String(value)}`);
  }
  if (max !== undefined && value > max) throw new InputError(`${name} must be at most ${max}, got ${value}`);
  return value;
}

/** An integer from 1 to max, or an InputError naming it. */
export function requireCount(name: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InputError(`${name} must be an integer from 1 to ${max}, got ${String(value)}`);
  }
  return value;
}

/** The most connections either mode opens. */
export const MAX_CONNECTIONS = 10_000;
/**
 * The most connections a scenario opens on demand when the user names no max_connections.
 * Connections open only when a due request finds every one busy, so this cap matters only when
 * the target holds requests long at a high rate (a blackhole, a latency of seconds): 1,000 carry
 * the rate while each request takes up to 1,000 ÷ rate seconds (1 s at 1,000 req/s; the whole
 * default 10 s timeout up to 100 req/s). Past that, requests wait in the generator, still timed
 * from their intended start, and the report names max_connections to raise. The former default,
 * rate × timeout (10,000 at 1,000 req/s, 6,581 here once the file-descriptor limit trimmed it),
 * let one run hold three sockets per connection through the proxy, and each connection's setup
 * costs faultline's process more CPU than a request: growing to 950 connections at
 * 10,000 req/s through the in-process proxy made its overload worse.
 */
export const DEFAULT_MAX_CONNECTIONS = 1_000;
/** setTimeout's limit (about 24.8 days); a longer timeout would fire at once. */
export const MAX_TIMEOUT_MS = 2_147_483_647;
