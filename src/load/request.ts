/**
 * The bytes of the one request a run sends, built once: every request of a run is identical, so
 * the hot path only writes a ready buffer.
 */
import type { ResolvedTarget } from './options.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

export function buildRequest(target: ResolvedTarget): Buffer {
  let head = `${target.method} ${target.path} HTTP/1.1\r\nhost: ${target.hostHeader}\r\n`;
  for (const [name, value] of target.headers) head += `${name}: ${value}\r\n`;
  // Servers may refuse a POST without a length (411), so say 0 rather than nothing.
  if (target.body.length > 0 || METHODS_WITH_BODY.has(target.method))
    head += `content-length: ${target.body.length}\r\n`;
  head += '\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), target.body]);
}
