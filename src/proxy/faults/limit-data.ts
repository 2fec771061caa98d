/**
 * limit_data: the link passes `bytes` bytes, then the stream ends there (the destination gets an
 * end of stream after exactly that many bytes) and the connection closes. Counted per connection
 * and direction, across updates of the limit. Toxiproxy's `limit_data` toxic.
 */
import {
  emptyCounters,
  SpecReader,
  type Fault,
  type FaultTarget,
  type LinkLabel,
  type LinkStage,
  type TimedPiece,
} from './fault.js';

export interface LimitDataSpec extends FaultTarget {
  type: 'limit_data';
  /** Bytes passed before the stream ends. */
  bytes: number;
}

export type ResolvedLimitData = Required<LimitDataSpec>;

/** The fields of a limit_data spec, defined once (bytes: a whole number ≥ 0). */
export function readLimitData(reader: SpecReader): ResolvedLimitData {
  const spec: ResolvedLimitData = {
    type: 'limit_data',
    ...reader.target(),
    bytes: reader.number('bytes', {
      min: 0,
      max: Number.MAX_SAFE_INTEGER,
      integer: true,
      expected: 'a whole number of bytes, 0 or more',
    }),
  };
  reader.done();
  return spec;
}

export function createLimitData(initial: ResolvedLimitData): Fault {
  let spec = initial;
  const counters = emptyCounters(spec.name, spec.type);
  return {
    counters,
    snapshot: () => ({ ...counters }),
    update(next) {
      if (next.type !== 'limit_data') return false;
      spec = next as ResolvedLimitData;
      return true;
    },
    attach(link: LinkLabel): LinkStage {
      let passed = 0;
      let cut = false;
      return {
        holds: false,
        shape(pieces: TimedPiece[]): TimedPiece[] {
          if (cut) return [];
          const out: TimedPiece[] = [];
          for (const piece of pieces) {
            const room = spec.bytes - passed;
            if (room <= 0) break;
            const data = piece.data.length <= room ? piece.data : piece.data.subarray(0, room);
            passed += data.length;
            out.push(data === piece.data ? piece : { data, at: piece.at });
          }
          if (passed >= spec.bytes) {
            cut = true;
            counters.applications++;
            link.control?.finish();
          }
          return out;
        },
        detach() {},
      };
    },
  };
}
