/**
 * Every network fault's declaration, in the order the doors list them. A new fault adds its
 * `<fault>.declaration.ts` here (and its reader and factory in index.ts); every door follows.
 */
import type { FaultDeclaration } from './declaration.js';
import type { Direction, FaultCounters, Side } from './fault.js';
import { BANDWIDTH } from './bandwidth.declaration.js';
import { BLACKHOLE } from './blackhole.declaration.js';
import { JITTER } from './jitter.declaration.js';
import { LATENCY } from './latency.declaration.js';
import { LIMIT_DATA } from './limit-data.declaration.js';
import { PACKET_LOSS } from './packet-loss.declaration.js';
import { RESET_PEER } from './reset-peer.declaration.js';
import { SLICER } from './slicer.declaration.js';
import { SLOW_CLOSE } from './slow-close.declaration.js';
import { STALL } from './stall.declaration.js';

/** The faults a scenario injects (one of them), and every proxy fault list takes. */
export const NETWORK_FAULTS = [LATENCY, JITTER, PACKET_LOSS, BANDWIDTH, BLACKHOLE] as const;
export type NetworkFaultType = (typeof NETWORK_FAULTS)[number]['type'];
/**
 * The faults that end or cut connections (Toxiproxy's timeout, reset_peer, slow_close, slicer and
 * limit_data toxics): taken by every proxy fault list (the admin API, the proxy tools, the
 * Toxiproxy API, experiments), not (yet) a scenario's one fault.
 */
export const CONNECTION_FAULTS = [STALL, RESET_PEER, SLOW_CLOSE, SLICER, LIMIT_DATA] as const;
export type ConnectionFaultType = (typeof CONNECTION_FAULTS)[number]['type'];
/** Every fault a proxy's network fault list takes. */
export const LIST_FAULTS: readonly FaultDeclaration[] = [...NETWORK_FAULTS, ...CONNECTION_FAULTS];

/** A network fault's declaration by type, typed loosely for the code that serves every fault alike. */
export function networkFault(
  type: string,
): FaultDeclaration<FaultCounters, { type: string; side: Side; direction: Direction }> | undefined {
  return LIST_FAULTS.find((fault) => fault.type === type) as never;
}
