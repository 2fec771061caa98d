/**
 * limit_data: the link passes `bytes` bytes, then the stream ends there (the destination gets an
 * end of stream after exactly that many bytes) and the connection closes. Counted per connection
 * and direction, across updates of the limit. Toxiproxy's `limit_data` toxic.
 */
import {
  liveFault,
  type Fault,
  type FaultTarget,
  type LinkLabel,
  type LinkStage,
  type LiveFault,
  type TimedPiece,
} from './fault.js';

export interface LimitDataSpec extends FaultTarget {
  type: 'limit_data';
  /** Bytes passed before the stream ends. */
  bytes: number;
}

export type ResolvedLimitData = Required<LimitDataSpec>;

export function createLimitData(spec: ResolvedLimitData): Fault {
  const attach = (link: LinkLabel, live: LiveFault<ResolvedLimitData>): LinkStage => {
    let passed = 0;
    let cut = false;
    return {
      holds: false,
      shape(pieces: TimedPiece[]): TimedPiece[] {
        if (cut) return [];
        const limit = live.spec.bytes;
        const out: TimedPiece[] = [];
        for (const piece of pieces) {
          const room = limit - passed;
          if (room <= 0) break;
          const data = piece.data.length <= room ? piece.data : piece.data.subarray(0, room);
          passed += data.length;
          out.push(data === piece.data ? piece : { data, at: piece.at });
        }
        if (passed >= limit) {
          cut = true;
          live.counters.applications++;
          link.control?.finish();
        }
        return out;
      },
      detach() {},
    };
  };
  return liveFault(spec, attach, { updatable: true });
}
