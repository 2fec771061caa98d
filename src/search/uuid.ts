/**
 * Name-based UUIDs, version 5 (RFC 9562 §5.5): SHA-1 of a namespace and a name, with the version
 * and variant bits set. Qdrant accepts only UUIDs or integers as point ids; a v5 id from a chunk's
 * path, symbol and content hash is the same on every run, so re-indexing overwrites instead of
 * duplicating.
 */
import { createHash } from 'node:crypto';

/** faultline's namespace for chunk ids (a fixed random UUID). */
export const CHUNK_NAMESPACE = '4b0f8a3e-6c2d-4e71-9a55-0d3c2f6b8e19';

export function uuidV5(name: string, namespace: string = CHUNK_NAMESPACE): string {
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (namespaceBytes.length !== 16) throw new Error(`uuidV5: namespace ${namespace} is not a UUID`);
  const bytes = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
