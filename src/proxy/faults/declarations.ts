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
import { PACKET_LOSS } from './packet-loss.declaration.js';

export const NETWORK_FAULTS = [LATENCY, JITTER, PACKET_LOSS, BANDWIDTH, BLACKHOLE] as const;
export type NetworkFaultType = (typeof NETWORK_FAULTS)[number]['type'];

/** A network fault's declaration by type, typed loosely for the code that serves every fault alike. */
export function networkFault(
  type: string,
): FaultDeclaration<FaultCounters, { type: string; side: Side; direction: Direction }> | undefined {
  return NETWORK_FAULTS.find((fault) => fault.type === type) as never;
}
