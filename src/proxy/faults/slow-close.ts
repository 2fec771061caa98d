/**
 * slow_close: the end of the stream (the peer's FIN) is passed on `delayMs` after it was read,
 * every byte before it on time. Toxiproxy's `slow_close` toxic.
 */
import { emptyCounters, MILLISECONDS, SpecReader, type Fault, type FaultTarget, type LinkStage } from './fault.js';

export interface SlowCloseSpec extends FaultTarget {
  type: 'slow_close';
  /** How long the end of stream waits, in ms. */
  delayMs: number;
}

export type ResolvedSlowClose = Required<SlowCloseSpec>;

/** The fields of a slow_close spec, defined once (delayMs: ms in 0..3600000). */
export function readSlowClose(reader: SpecReader): ResolvedSlowClose {
  const spec: ResolvedSlowClose = {
    type: 'slow_close',
    ...reader.target(),
    delayMs: reader.number('delayMs', MILLISECONDS),
  };
  reader.done();
  return spec;
}

export function createSlowClose(initial: ResolvedSlowClose): Fault {
  let spec = initial;
  const counters = emptyCounters(spec.name, spec.type);
  return {
    counters,
    snapshot: () => ({ ...counters }),
    update(next) {
      if (next.type !== 'slow_close') return false;
      spec = next as ResolvedSlowClose;
      return true;
    },
    attach(): LinkStage {
      let counted = false;
      return {
        holds: false,
        shape: (pieces) => pieces,
        endDelayMs() {
          if (!counted && spec.delayMs > 0) {
            counted = true;
            counters.applications++;
            counters.delayAddedMs += spec.delayMs;
          }
          return spec.delayMs;
        },
        detach() {},
      };
    },
  };
}
