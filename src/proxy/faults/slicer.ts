/**
 * slicer: cuts each chunk into pieces of about `averageSize` bytes (± `sizeVariation`) and sends
 * them `delayUs` microseconds apart, each piece on the link's own clock so the stream is never
 * reordered. The cut points are those of Toxiproxy's `slicer` toxic (halving until a piece is
 * within the variation of the average), drawn from the seeded source.
 */
import { createRandom, type Random } from '../../kernel/random.js';
import {
  emptyCounters,
  SpecReader,
  type Fault,
  type FaultTarget,
  type LinkLabel,
  type LinkStage,
  type TimedPiece,
} from './fault.js';

export interface SlicerSpec extends FaultTarget {
  type: 'slicer';
  /** The size pieces are cut around, in bytes (≥ 1). */
  averageSize: number;
  /** How far a piece's size may stray from the average, in bytes (default 0). */
  sizeVariation?: number;
  /** Time between pieces, in microseconds (default 0). */
  delayUs?: number;
}

export type ResolvedSlicer = Required<SlicerSpec>;

/** A piece's time apart from the next is at most a minute. */
const MAX_DELAY_US = 60_000_000;

/** The fields of a slicer spec, defined once. */
export function readSlicer(reader: SpecReader): ResolvedSlicer {
  const size = { min: 1, max: 1 << 30, integer: true, expected: 'a whole number of bytes in 1..1073741824' };
  const spec: ResolvedSlicer = {
    type: 'slicer',
    ...reader.target(),
    averageSize: reader.number('averageSize', size),
    sizeVariation: reader.number('sizeVariation', {
      ...size,
      min: 0,
      default: 0,
      expected: 'a whole number of bytes, 0 or more',
    }),
    delayUs: reader.number('delayUs', {
      min: 0,
      max: MAX_DELAY_US,
      default: 0,
      expected: `a number of microseconds in 0..${MAX_DELAY_US}`,
    }),
  };
  reader.done();
  return spec;
}

/** The cut points of [start, end): halves until each piece is within the variation of the average. */
export function slicePoints(spec: ResolvedSlicer, length: number, random: Random): number[] {
  const cuts: number[] = [];
  const cut = (start: number, end: number): void => {
    if (end - start - spec.averageSize <= spec.sizeVariation) {
      cuts.push(end);
      return;
    }
    let mid = start + Math.floor((end - start) / 2);
    if (spec.sizeVariation > 0) mid += Math.floor(random.uniform(-spec.sizeVariation, spec.sizeVariation));
    mid = Math.min(end - 1, Math.max(start + 1, mid));
    cut(start, mid);
    cut(mid, end);
  };
  if (length > 0) cut(0, length);
  return cuts;
}

export function createSlicer(initial: ResolvedSlicer, seed: number | string): Fault {
  let spec = initial;
  const counters = emptyCounters(spec.name, spec.type);
  return {
    counters,
    snapshot: () => ({ ...counters }),
    update(next) {
      if (next.type !== 'slicer') return false;
      spec = next as ResolvedSlicer;
      return true;
    },
    attach(link: LinkLabel): LinkStage {
      const random = createRandom(seed, `${spec.name}/${link.connectionId}/${link.direction}`);
      let readyAt = 0;
      return {
        holds: false,
        shape(pieces: TimedPiece[]): TimedPiece[] {
          const out: TimedPiece[] = [];
          const gap = spec.delayUs / 1000;
          for (const piece of pieces) {
            let start = 0;
            for (const end of slicePoints(spec, piece.data.length, random)) {
              const at = Math.max(piece.at, readyAt);
              out.push({ data: piece.data.subarray(start, end), at });
              readyAt = at + gap;
              start = end;
              counters.applications++;
            }
          }
          return out;
        },
        detach() {},
      };
    },
  };
}
