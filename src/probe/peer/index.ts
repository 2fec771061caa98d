/**
 * A raw JSON-RPC peer for probing: it speaks to an MCP server over stdio (a child process tree it
 * spawns and always ends) or streamable HTTP (one POST per message, JSON or SSE answers), reads
 * everything within PEER_BOUNDS, and keeps a transcript of every line sent and received, so that
 * a finding can quote the exact exchange that shows it. Raw rather than the SDK client because the
 * probes must send what a well-behaved client never would: requests before initialize, malformed
 * JSON, bad ids.
 */
import type { LookupFunction } from 'node:net';
import type { ProgramPolicy } from '../../consent/index.js';
import type { Peer, Target } from './base.js';
import { HttpPeer } from './http.js';
import { StdioPeer } from './stdio.js';

export {
  handshake,
  PeerStopped,
  PROBE_PROTOCOL_VERSION,
  type HttpTarget,
  type Peer,
  type Reply,
  type Target,
  type TranscriptLine,
} from './base.js';
export { postRaw } from './http.js';

export interface PeerOptions {
  /** Aborting it ends every wait of the peer at once (PeerStopped) and cuts its HTTP requests. */
  stop?: AbortSignal;
  /** HTTP: resolves the target's name at every connect (the target policy's lookup). */
  lookup?: LookupFunction;
  /** stdio: whether the server may be started (src/consent). */
  programs: ProgramPolicy;
}

export function openPeer(target: Target, options: PeerOptions): Peer {
  return target.kind === 'stdio'
    ? new StdioPeer(target, options.programs, options.stop)
    : new HttpPeer(target, options.stop, options.lookup);
}
