/**
 * reset_peer: once data reaches the link, the connection is reset (TCP RST to both ends) after
 * `afterMs`; that data and whatever follows is not passed on, as a reset loses it. Toxiproxy's
 * `reset_peer` toxic.
 */
import {
  emptyCounters,
  MILLISECONDS,
  SpecReader,
  type Fault,
  type FaultTarget,
  type LinkLabel,
  type LinkStage,
  type TimedPiece,
} from './fault.js';

export interface ResetPeerSpec extends FaultTarget {
  type: 'reset_peer';
  /** Reset this long after the first data reached the link (0: at once). */
  afterMs: number;
}

export type ResolvedResetPeer = Required<ResetPeerSpec>;

/** The fields of a reset_peer spec, defined once (afterMs: ms in 0..3600000). */
export function readResetPeer(reader: SpecReader): ResolvedResetPeer {
  const spec: ResolvedResetPeer = {
    type: 'reset_peer',
    ...reader.target(),
    afterMs: reader.number('afterMs', MILLISECONDS),
  };
  reader.done();
  return spec;
}

export function createResetPeer(initial: ResolvedResetPeer): Fault {
  let spec = initial;
  const counters = emptyCounters(spec.name, spec.type);
  return {
    counters,
    snapshot: () => ({ ...counters }),
    update(next) {
      if (next.type !== 'reset_peer') return false;
      spec = next as ResolvedResetPeer;
      return true;
    },
    attach(link: LinkLabel): LinkStage {
      let timer: NodeJS.Timeout | undefined;
      let armed = false;
      return {
        holds: false,
        shape(_pieces: TimedPiece[]): TimedPiece[] {
          if (!armed) {
            armed = true;
            counters.applications++;
            const reset = (): void => link.control?.reset();
            if (spec.afterMs === 0) reset();
            else {
              timer = setTimeout(reset, spec.afterMs);
              timer.unref();
            }
          }
          return [];
        },
        detach() {
          clearTimeout(timer);
        },
      };
    },
  };
}
