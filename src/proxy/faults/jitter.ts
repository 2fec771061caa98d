/**
 * jitter: an extra delay drawn uniformly in [0, amplitudeMs] and redrawn frequencyHz times a second.
 *
 * Time is cut into windows of 1/frequencyHz seconds from the moment the fault was created; the
 * first chunk a link reads in a new window draws that window's value and every chunk of the window
 * takes it (so with steady traffic the delay changes about frequencyHz times a second). Each
 * chunk's delay is counted from its arrival, and the link keeps the order.
 */
import { performance } from 'node:perf_hooks';
import { createRandom } from '../../kernel/random.js';
import {
  liveFault,
  type ChunkInfo,
  type Fault,
  type FaultCounters,
  type FaultTarget,
  type LinkStage,
  type TimedPiece,
} from './fault.js';

export interface JitterSpec extends FaultTarget {
  type: 'jitter';
  amplitudeMs: number;
  /** Default 5 (jitter.declaration.ts). */
  frequencyHz?: number;
}

export type ResolvedJitter = Required<JitterSpec>;

/** One link's jitter: the value of the current window. Exported for tests that drive it with synthetic times. */
export function jitterStage(
  spec: ResolvedJitter,
  random: { uniform(min: number, max: number): number },
  epoch: number,
  counters: FaultCounters,
): LinkStage {
  const windowMs = 1000 / spec.frequencyHz;
  let window = Number.NaN;
  let value = 0;
  return {
    holds: false,
    shape(pieces: TimedPiece[], chunk: ChunkInfo): TimedPiece[] {
      const current = Math.floor((chunk.arrival - epoch) / windowMs);
      if (current !== window) {
        window = current;
        value = random.uniform(0, spec.amplitudeMs);
      }
      counters.applications++;
      counters.delayAddedMs += value;
      for (const piece of pieces) piece.at += value;
      return pieces;
    },
    detach() {},
  };
}

export function createJitter(spec: ResolvedJitter, seed: number | string): Fault {
  const epoch = performance.now();
  return liveFault(spec, (link, { counters }) =>
    jitterStage(spec, createRandom(seed, `${spec.name}/${link.connectionId}/${link.direction}`), epoch, counters),
  );
}
