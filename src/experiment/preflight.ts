/**
 * Before the load starts: is anything listening where the run will send traffic? The load's own
 * url (nothing there: the run stops at once, nothing was tested) and each mapping's remote, the
 * dependency the faults act on (nothing there: said before the load, and the run cannot pass, since
 * the app served from whatever fallback it has and the dependency was never exercised).
 *
 * A TCP connect, through the policy's lookup, closed as soon as it opens: no byte is written (for an
 * https:// load url, a TLS client hello, then closed once the handshake ends). The
 * dependency still sees a connection accepted and closed, which some log (haproxy as a 400
 * <BADREQ>, PostgreSQL as a connection received with no login): docs/experiments.md says so.
 */
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import tls from 'node:tls';
import { formatAddress, type Mapping } from '../proxy/mapping.js';

/** How long one connect may take before the remote counts as unreachable. */
export const PREFLIGHT_TIMEOUT_MS = 3000;

export interface Unreachable {
  /** The mapping as written (or the load's url). */
  where: string;
  /** host:port dialled. */
  address: string;
  /** ECONNREFUSED, a timeout, a DNS error. */
  why: string;
}

/** Resolves to undefined when host:port accepts a connection, else why not. */
export function tryConnect(
  host: string,
  port: number,
  lookup: LookupFunction | undefined,
  timeoutMs = PREFLIGHT_TIMEOUT_MS,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, ...(lookup ? { lookup } : {}) });
    const done = (why: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}

/**
 * Resolves to undefined when the load's url accepts a connection, else why not. For https:// the TLS
 * handshake runs too (certificates unchecked: the load judges those and its report explains them), so a
 * plain-HTTP server behind an https:// url is said before the load, not as 100% errors after it.
 */
export async function tryUrl(
  url: string,
  lookup: LookupFunction | undefined,
  timeoutMs = PREFLIGHT_TIMEOUT_MS,
): Promise<string | undefined> {
  const { host, port } = urlAddress(url);
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:') return tryConnect(host, port, lookup, timeoutMs);
  return new Promise((resolve) => {
    const socket = tls.connect({
      host,
      port,
      ...(lookup ? { lookup } : {}),
      ...(net.isIP(host) === 0 ? { servername: host } : {}),
      rejectUnauthorized: false,
    });
    let connected = false;
    const done = (why: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => (connected = true));
    socket.once('secureConnect', () => done(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.message;
      // Connected, then the handshake failed. A reset is a reset (an app down behind a load balancer, one still
      // starting); any other failure is the server's TLS, said with its code (NOT_TLS: plain HTTP there).
      done(connected && code !== 'ECONNRESET' && code !== 'EPIPE' ? `${TLS_FAILED}${code}` : code);
    });
  });
}

/** tryUrl's answer when the connection opened but the TLS handshake failed: this, then the error's code. */
const TLS_FAILED = 'tls:';

/** The handshake's failures that mean the server answered, but not in TLS: plain HTTP at an https:// url. */
const NOT_TLS: ReadonlySet<string> = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO']);

/** Whether tryUrl's `why` says a server answered there, but not in TLS: the url is wrong, the app is up. */
export function listensAt(why: string): boolean {
  return why.startsWith(TLS_FAILED) && NOT_TLS.has(why.slice(TLS_FAILED.length));
}

/** What the preflight says of an address that failed `why` (tryUrl's answer). */
export function refusalAt(address: string, why: string): string {
  if (listensAt(why))
    return (
      `${address} accepts connections but does not complete a TLS handshake ` +
      `(${why.slice(TLS_FAILED.length)}): plain HTTP is served at http://`
    );
  if (why.startsWith(TLS_FAILED)) return `the TLS handshake with ${address} failed (${why.slice(TLS_FAILED.length)})`;
  if (why === 'ECONNRESET') return `the connection to ${address} was reset as it opened (ECONNRESET)`;
  return `nothing accepts connections at ${address} (${why})`;
}

/** The load's url: host and port as the load dials them. */
export function urlAddress(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  const port = parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port };
}

/** Each mapping whose remote does not accept a connection, in parallel. */
export async function unreachableRemotes(
  mappings: readonly Mapping[],
  lookup: LookupFunction | undefined,
): Promise<Unreachable[]> {
  const answers = await Promise.all(
    mappings.map(async (mapping) => ({
      mapping,
      why: await tryConnect(mapping.remoteHost, mapping.remotePort, lookup),
    })),
  );
  return answers
    .filter((answer) => answer.why !== undefined)
    .map(({ mapping, why }) => ({
      where: mapping.name ? `#${mapping.name}` : mapping.text,
      address: formatAddress(mapping.remoteHost, mapping.remotePort),
      why: why!,
    }));
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * What to say when load.url's port is one of the experiment's own proxies (undefined when it is
 * not): a proxy listens only once the run starts, and stands in front of a dependency, not the app.
 */
export function proxyAtLoadUrl(mappings: readonly Mapping[], host: string, port: number): string | undefined {
  const sameHost = (listenHost: string) =>
    listenHost === host || (LOOPBACK_NAMES.has(listenHost) && LOOPBACK_NAMES.has(host));
  const mapping = mappings.find((m) => m.listenPort === port && sameHost(m.listenHost));
  if (mapping === undefined) return undefined;
  return (
    `that port is the experiment's own proxy ${mapping.name ? `#${mapping.name}` : mapping.text} (proxies), ` +
    'in front of a dependency: point load.url at the app ' +
    "(with no proxies, a fault goes on a proxy in front of the load's url)"
  );
}
