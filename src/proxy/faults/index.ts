/**
 * Fault specs as plain typed objects, their validation, and the factory that turns a validated
 * spec into a `Fault`. Validation throws an InputError naming the fault and the field, with
 * what is accepted; the MCP tools show that message as it is.
 */
import { InputError } from '../../kernel/errors.js';
import { CONNECTION_FAULT_TYPES, NETWORK_FAULT_TYPES } from '../vocabulary.js';
import { createBandwidth, type BandwidthSpec, type ResolvedBandwidth } from './bandwidth.js';
import { createBlackhole, type BlackholeSpec, type ResolvedBlackhole } from './blackhole.js';
import { LIST_FAULTS } from './declarations.js';
import { refuseSameNames, SpecReader, type Fault } from './fault.js';
import { createJitter, type JitterSpec, type ResolvedJitter } from './jitter.js';
import { createLatency, type LatencySpec, type ResolvedLatency } from './latency.js';
import { createLimitData, type LimitDataSpec, type ResolvedLimitData } from './limit-data.js';
import { createPacketLoss, readPacketLoss, type PacketLossSpec, type ResolvedPacketLoss } from './packet-loss.js';
import { createResetPeer, type ResetPeerSpec, type ResolvedResetPeer } from './reset-peer.js';
import { createSlicer, type ResolvedSlicer, type SlicerSpec } from './slicer.js';
import { createSlowClose, type ResolvedSlowClose, type SlowCloseSpec } from './slow-close.js';
import { createStall, type ResolvedStall, type StallSpec } from './stall.js';

/** The faults that end or cut connections (CONNECTION_FAULT_TYPES). */
export type ConnectionFaultSpec = StallSpec | ResetPeerSpec | SlowCloseSpec | SlicerSpec | LimitDataSpec;
export type FaultSpec = LatencySpec | JitterSpec | PacketLossSpec | BandwidthSpec | BlackholeSpec | ConnectionFaultSpec;
/** A validated spec with every default filled in. */
export type ResolvedFault =
  | ResolvedLatency
  | ResolvedJitter
  | ResolvedPacketLoss
  | ResolvedBandwidth
  | ResolvedBlackhole
  | ResolvedStall
  | ResolvedResetPeer
  | ResolvedSlowClose
  | ResolvedSlicer
  | ResolvedLimitData;
/** The network fault types: the vocabulary's one list (tools and CLI quote it without loading this module). */
export type FaultType = (typeof NETWORK_FAULT_TYPES)[number];
/** Every type a proxy's fault list takes: the scenario faults and the connection faults. */
export type ListFaultType = FaultType | (typeof CONNECTION_FAULT_TYPES)[number];
/** Every spec's type is in that list (compile-time check); READERS has a reader per declaration. */
const specTypesListed: FaultSpec['type'] extends ListFaultType ? true : never = true;
void specTypesListed;

/** Each fault's reader: its declaration's (SpecReader.spec), or its own where its fields depend on each other. */
const READERS: Record<string, (reader: SpecReader) => ResolvedFault> = {
  ...Object.fromEntries(LIST_FAULTS.map((fault) => [fault.type, (reader: SpecReader) => reader.spec(fault)])),
  packet_loss: readPacketLoss,
};
export const FAULT_TYPES: readonly ListFaultType[] = [...NETWORK_FAULT_TYPES, ...CONNECTION_FAULT_TYPES];

/** Checks one fault spec (of unknown shape) and fills in its defaults. */
export function validateFault(spec: unknown): ResolvedFault {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new InputError(`a fault must be an object with a "type" (one of ${FAULT_TYPES.join(', ')})`);
  }
  const raw = spec as Record<string, unknown>;
  const read =
    typeof raw['type'] === 'string' && Object.hasOwn(READERS, raw['type']) ? READERS[raw['type']] : undefined;
  if (!read)
    throw new InputError(`fault type must be one of ${FAULT_TYPES.join(', ')} (got ${JSON.stringify(raw['type'])})`);
  return read(new SpecReader(raw['type'] as string, raw));
}

/** Checks a fault list: each fault, and that their names (default: the type) are distinct. */
export function validateFaults(specs: unknown): ResolvedFault[] {
  if (!Array.isArray(specs)) throw new InputError('faults must be an array of fault objects');
  const resolved = specs.map(validateFault);
  refuseSameNames(resolved, 'faults');
  return resolved;
}

export function createFault(spec: ResolvedFault, seed: number | string, clock: () => number): Fault {
  switch (spec.type) {
    case 'latency':
      return createLatency(spec, seed);
    case 'jitter':
      return createJitter(spec, seed);
    case 'packet_loss':
      return createPacketLoss(spec, seed);
    case 'bandwidth':
      return createBandwidth(spec);
    case 'blackhole':
      return createBlackhole(spec, clock);
    case 'stall':
      return createStall(spec, clock);
    case 'reset_peer':
      return createResetPeer(spec);
    case 'slow_close':
      return createSlowClose(spec);
    case 'slicer':
      return createSlicer(spec, seed);
    case 'limit_data':
      return createLimitData(spec);
  }
}
