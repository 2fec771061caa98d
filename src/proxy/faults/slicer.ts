/**
 * slicer: cuts each chunk into pieces of about `averageSize` bytes (± `sizeVariation`) and sends
 * them `delayUs` microseconds apart, each piece on the link's own clock so the stream is never
 * reordered. The cut points are those of Toxiproxy's `slicer` toxic (halving until a piece is
 * within the variation of the average), drawn from the seeded source.
 */
import { createRandom, type Random } from '../../kernel/random.js';
import {
  liveFault,
  type Fault,
  type FaultTarget,
  type LinkLabel,
  type LinkStage,
  type LiveFault,
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

export function createSlicer(spec: ResolvedSlicer, seed: number | string): Fault {
  const attach = (link: LinkLabel, live: LiveFault<ResolvedSlicer>): LinkStage => {
    const random = createRandom(seed, `${spec.name}/${link.connectionId}/${link.direction}`);
    let readyAt = 0;
    return {
      holds: false,
      shape(pieces: TimedPiece[]): TimedPiece[] {
        const out: TimedPiece[] = [];
        const gap = live.spec.delayUs / 1000;
        for (const piece of pieces) {
          let start = 0;
          for (const end of slicePoints(live.spec, piece.data.length, random)) {
            const at = Math.max(piece.at, readyAt);
            out.push({ data: piece.data.subarray(start, end), at });
            readyAt = at + gap;
            start = end;
            live.counters.applications++;
          }
        }
        return out;
      },
      detach() {},
    };
  };
  return liveFault(spec, attach, { updatable: true });
}
