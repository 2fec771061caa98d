/**
 * HTTP framing helpers of the HTTP stage: telling HTTP/1.x from other protocols by its first
 * bytes, the headers forwarded each way (hop-by-hop ones dropped, Host pointed at the remote),
 * and sending a whole response with the right content-length.
 */
import type http from 'node:http';
import type { Mapping } from '../mapping.js';
import type { BufferedResponse } from './fault.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
]);

/**
 * What a connection speaks, from its first bytes: 'http' when they start like an HTTP/1.x request
 * line, 'resp' like a Redis command array (`*N\r\n`), 'more' when too few to say. On a mapping
 * declared Redis (`redis://`), anything else is a RESP inline command.
 */
export function classify(data: Buffer, declared?: 'http' | 'resp'): 'http' | 'resp' | 'tcp' | 'more' {
  if (data[0] === 0x2a) {
    const head = data.subarray(0, 16).toString('latin1');
    if (/^\*\d{1,10}\r\n/.test(head)) return 'resp';
    return /^\*\d{0,10}\r?$/.test(head) ? 'more' : 'tcp';
  }
  if (declared === 'resp' && data.length > 0) return 'resp';
  const head = data.subarray(0, 24).toString('latin1');
  const match = /^([A-Z]{1,20})(?: |$)/.exec(head);
  if (!match) return head.length === 0 ? 'more' : 'tcp';
  if (head.length === match[1]!.length) return head.length < 20 ? 'more' : 'tcp';
  return match[1] === 'PRI' ? 'tcp' : 'http'; // "PRI * HTTP/2.0": HTTP/2 prior knowledge
}

const NONE_LISTED: ReadonlySet<string> = new Set();

function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

/** The request's headers for the upstream: hop-by-hop ones dropped, Host pointed at the remote when it named the proxy.
 * */
export function requestHeaders(
  req: http.IncomingMessage,
  mapping: Mapping,
  plainBody: boolean,
  keepUpgrade = false,
): http.OutgoingHttpHeaders {
  // Most requests name no header in Connection but keep-alive: no set to build for them.
  const connection = req.headers['connection'];
  const listed =
    connection === undefined || /^\s*keep-alive\s*$/i.test(connection)
      ? NONE_LISTED
      : new Set(
          connection
            .toLowerCase()
            .split(',')
            .map((s) => s.trim()),
        );
  const out: http.OutgoingHttpHeaders = {};
  const headers = req.headers;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || name === 'expect') continue;
    if (name === 'transfer-encoding') {
      if (String(value).toLowerCase().includes('chunked')) out[name] = 'chunked';
      continue;
    }
    if (keepUpgrade && (name === 'connection' || name === 'upgrade')) {
      out[name] = String(value);
      continue;
    }
    if (HOP_BY_HOP.has(name) || listed.has(name)) continue;
    if (plainBody && name === 'accept-encoding') continue;
    out[name] = value;
  }
  const host = typeof out['host'] === 'string' ? out['host'] : '';
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  if (!host || isLoopbackName(hostname) || hostname === mapping.listenHost) {
    const defaultPort = mapping.tls ? 443 : 80;
    const remote = mapping.remoteHost.includes(':') ? `[${mapping.remoteHost}]` : mapping.remoteHost;
    out['host'] = mapping.remotePort === defaultPort ? remote : `${remote}:${mapping.remotePort}`;
  }
  return out;
}

/** The lengths of the hop-by-hop names: a name of another length is forwarded without lower-casing it. */
const HOP_BY_HOP_LENGTHS = new Set([...HOP_BY_HOP].map((name) => name.length));
const CONTENT_LENGTH = 'content-length';

/** Raw response headers as a flat list, hop-by-hop (and, unless kept, content-length) removed. */
export function responseHeaders(raw: string[], keepLength: boolean): string[] {
  // Names Connection lists beyond the hop-by-hop ones (its usual "keep-alive" adds none).
  let listed: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 10 || name.toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1]!.toLowerCase().split(',')) {
      const listedName = token.trim();
      if (!HOP_BY_HOP.has(listedName)) (listed ??= new Set()).add(listedName);
    }
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const length = name.length;
    if (listed !== undefined || HOP_BY_HOP_LENGTHS.has(length) || (!keepLength && length === CONTENT_LENGTH.length)) {
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower) || listed?.has(lower) || (!keepLength && lower === CONTENT_LENGTH)) continue;
    }
    out.push(name, raw[i + 1]!);
  }
  return out;
}

export function pairs(flatList: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < flatList.length; i += 2) out.push([flatList[i]!, flatList[i + 1]!]);
  return out;
}

export function flat(list: Array<[string, string]>): string[] {
  return list.flat();
}

/** Sends a whole response with its content-length (none for HEAD, 1xx, 204 and 304, which carry no body). */
export function sendWhole(res: http.ServerResponse, req: http.IncomingMessage, response: BufferedResponse): void {
  const noBody = req.method === 'HEAD' || response.status === 204 || response.status === 304 || response.status < 200;
  const headers = response.headers.filter(([name]) => noBody || name.toLowerCase() !== 'content-length');
  if (!noBody) headers.push(['content-length', String(response.body.length)]);
  res.writeHead(response.status, response.statusMessage || undefined, flat(headers));
  res.end(noBody ? undefined : response.body);
}
