/**
 * The one parser for proxy mappings `LOCAL=REMOTE`; the CLI, the scenario runner
 * and the MCP tools all call `parseMapping`.
 *
 *   34000=example.com:443            listen 127.0.0.1:34000, TLS to example.com:443 (SNI example.com)
 *   127.0.0.1:34000=api.local:80     listen on the given address, plain TCP
 *   0=tls://db.local:5433            ephemeral port, TLS
 *   [::1]:8080=[::1]:80              IPv6 literals in brackets
 *   34000=tcp://example.com:443      `tcp://` forces plain passthrough even on port 443, and declares
 *                                    an opaque stream: carried from the first byte, never sniffed
 *   34000=https://example.com        `https://` without a port means 443 (`http://` means 80)
 *   34000=api.example.com:443#weather-api   `#name`: a name the control plane's targets can use
 *   6380=redis://127.0.0.1:6379#redis   `redis://` (`rediss://` with TLS): the mapping carries Redis,
 *                                       so request faults act per command (and those that cannot
 *                                       are refused when set); the port defaults to 6379
 */
import { isIP } from 'node:net';
import { InputError } from '../kernel/errors.js';

export interface Mapping {
  /** The mapping as written. */
  text: string;
  /** Address the listener binds: 127.0.0.1 unless the mapping names one. */
  listenHost: string;
  /** 0 asks the system for an ephemeral port. */
  listenPort: number;
  /** Host to dial, without brackets for IPv6 literals. */
  remoteHost: string;
  remotePort: number;
  /** Originate TLS towards the remote. */
  tls: boolean;
  /** TLS server name (SNI) to send; absent for IP literals and plain TCP. */
  servername?: string;
  /** The `#name` suffix, when given: fault targets may name the mapping by it. */
  name?: string;
  /**
   * What the scheme says the mapping carries (http://, https://, redis://, rediss://, and tcp://:
   * an opaque stream, passed on from the first byte); else detected per connection.
   */
  protocol?: 'http' | 'resp' | 'tcp';
}

export const ACCEPTED_MAPPING_FORMS =
  'PORT=HOST:PORT, ADDR:PORT=HOST:PORT, [IPv6]:PORT=HOST:PORT, 0=HOST:PORT (ephemeral port); ' +
  'the remote may be https://HOST[:PORT] or tls://HOST:PORT (TLS), ' +
  'tcp://HOST:PORT or http://HOST[:PORT] (plain), ' +
  'redis://HOST[:PORT] or rediss://HOST[:PORT] (Redis, plain or ' +
  'TLS), ' +
  'and a bare HOST:443 means TLS with SNI=HOST; an optional #NAME ' +
  'suffix names the mapping; e.g. 34000=example.com:443, ' +
  '127.0.0.1:0=[::1]:8080, 34000=api.local:80#api';

const SCHEMES: Record<string, { tls: boolean; defaultPort?: number; protocol?: 'http' | 'resp' | 'tcp' }> = {
  https: { tls: true, defaultPort: 443, protocol: 'http' },
  tls: { tls: true },
  http: { tls: false, defaultPort: 80, protocol: 'http' },
  tcp: { tls: false, protocol: 'tcp' },
  redis: { tls: false, defaultPort: 6379, protocol: 'resp' },
  rediss: { tls: true, defaultPort: 6379, protocol: 'resp' },
};

/**
 * The mapping a run puts between its load and `url` (an ephemeral port, plain to the url's host): an http url's
 * mapping speaks HTTP, so its faults act per request; an https url's is opaque tcp://, so TLS stays end to end with
 * the url's server name. One rule for scenarios and experiments.
 */
export function mappingInFrontOf(url: URL, name?: string): string {
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  const scheme = url.protocol === 'https:' ? 'tcp' : 'http';
  return `0=${scheme}://${url.hostname}:${port}${name !== undefined ? `#${name}` : ''}`;
}

export function parseMapping(text: string): Mapping {
  const fail = (reason: string): never => {
    throw new InputError(
      `invalid proxy mapping ${JSON.stringify(text)}: ${reason}. Accepted forms: ${ACCEPTED_MAPPING_FORMS}`,
    );
  };
  if (typeof text !== 'string') return fail('a mapping is a string');
  let trimmed = text.trim();
  let name: string | undefined;
  const named = /#([A-Za-z0-9._-]{1,64})$/.exec(trimmed);
  if (named) {
    name = named[1];
    trimmed = trimmed.slice(0, named.index).trim();
  } else if (trimmed.includes('#')) return fail('a name after "#" is 1 to 64 letters, digits, ".", "_" or "-"');
  const equals = trimmed.indexOf('=');
  if (equals < 0) return fail('missing "=" between the local and the remote side');
  const local = trimmed.slice(0, equals).trim();
  let remote = trimmed.slice(equals + 1).trim();
  if (!local) return fail('the local side (before "=") is empty');
  if (!remote) return fail('the remote side (after "=") is empty');

  let listenHost = '127.0.0.1';
  let listenPortText = local;
  if (!/^\d+$/.test(local)) {
    const split = splitHostPort(local);
    if (!split) return fail(`local side ${JSON.stringify(local)} is not PORT, ADDR:PORT or [IPv6]:PORT`);
    listenHost = split.host;
    listenPortText = split.port;
  }
  const listenPort = parsePort(listenPortText, 0);
  if (listenPort === undefined)
    return fail(`local port ${JSON.stringify(listenPortText)} is not an integer in 0..65535`);

  let scheme: string | undefined;
  const schemeMatch = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(remote);
  if (schemeMatch) {
    scheme = schemeMatch[1]!.toLowerCase();
    if (!(scheme in SCHEMES))
      return fail(`unknown scheme "${scheme}://" (use https://, tls://, tcp://, http://, redis:// or rediss://)`);
    remote = remote.slice(schemeMatch[0].length).replace(/\/$/, '');
    if (remote.includes('/')) return fail('the remote is HOST:PORT, without a path');
  }
  const schemeInfo = scheme ? SCHEMES[scheme] : undefined;
  let split = splitHostPort(remote);
  if (!split && schemeInfo?.defaultPort !== undefined && isHostOnly(remote)) {
    split = { host: unbracket(remote), port: String(schemeInfo.defaultPort) };
  }
  if (!split) return fail(`remote ${JSON.stringify(remote)} is not HOST:PORT`);
  const remotePort = parsePort(split.port, 1);
  if (remotePort === undefined) return fail(`remote port ${JSON.stringify(split.port)} is not an integer in 1..65535`);

  const tls = schemeInfo ? schemeInfo.tls : remotePort === 443;
  const mapping: Mapping = { text: text.trim(), listenHost, listenPort, remoteHost: split.host, remotePort, tls };
  if (tls && isIP(split.host) === 0) mapping.servername = split.host;
  if (name !== undefined) mapping.name = name;
  if (schemeInfo?.protocol) mapping.protocol = schemeInfo.protocol;
  return mapping;
}

/** `host:port` or `[v6]:port`; undefined when it is neither. */
function splitHostPort(value: string): { host: string; port: string } | undefined {
  const bracketed = /^\[([0-9a-fA-F:.]+(?:%[\w.-]+)?)\]:(\d+)$/.exec(value);
  if (bracketed) return isIP(bracketed[1]!) === 6 ? { host: bracketed[1]!, port: bracketed[2]! } : undefined;
  const plain = /^([A-Za-z0-9._-]+):(\d+)$/.exec(value);
  if (plain) return { host: plain[1]!, port: plain[2]! };
  return undefined;
}

function isHostOnly(value: string): boolean {
  return /^[A-Za-z0-9._-]+$/.test(value) || (/^\[.+\]$/.test(value) && isIP(unbracket(value)) === 6);
}

function unbracket(value: string): string {
  return value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
}

function parsePort(value: string, min: number): number | undefined {
  if (!/^\d{1,5}$/.test(value)) return undefined;
  const port = Number(value);
  return port >= min && port <= 65535 ? port : undefined;
}

/**
 * Whether a fault's `target` names this mapping: its local port, the port it is bound to, or its
 * name, with or without the "#" README writes it with. One rule for the TCP faults and the HTTP
 * stage, so a target accepted by one is accepted by the other.
 */
export function targetNamesMapping(target: string, mapping: Mapping, boundPort: number | undefined): boolean {
  return (
    (mapping.name !== undefined && target.replace(/^#/, '') === mapping.name) ||
    (boundPort !== undefined && boundPort !== 0 && target === String(boundPort)) ||
    (mapping.listenPort !== 0 && target === String(mapping.listenPort))
  );
}

/** The refusal of a target that names no mapping, listing what does (`where`: e.g. "faults[1]: "). */
export function unknownTargetError(
  target: string,
  mappings: readonly Mapping[],
  boundPorts: (index: number) => number | undefined,
  where = '',
): InputError {
  const names = mappings.flatMap((mapping, index) => {
    const port = boundPorts(index) || mapping.listenPort;
    return [...(port ? [String(port)] : []), ...(mapping.name ? [`#${mapping.name}`] : [])];
  });
  return new InputError(
    `${where}fault target "${target}" names no mapping; accepted: ${names.join(', ') || 'none (give the mapping a #name)'}`,
  );
}

/** host:port, an IPv6 host in brackets; "?" for what is not known. */
export function formatAddress(host: string | undefined, port: number | undefined): string {
  const h = host ?? '?';
  return `${h.includes(':') ? `[${h}]` : h}:${port ?? '?'}`;
}
