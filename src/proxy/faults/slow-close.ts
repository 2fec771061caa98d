/**
 * slow_close: the end of the stream (the peer's FIN) is passed on `delayMs` after it was read,
 * every byte before it on time. Toxiproxy's `slow_close` toxic.
 */
import { liveFault, type Fault, type FaultTarget, type LinkLabel, type LinkStage, type LiveFault } from './fault.js';

export interface SlowCloseSpec extends FaultTarget {
  type: 'slow_close';
  /** How long the end of stream waits, in ms. */
  delayMs: number;
}

export type ResolvedSlowClose = Required<SlowCloseSpec>;

export function createSlowClose(spec: ResolvedSlowClose): Fault {
  const attach = (_link: LinkLabel, live: LiveFault<ResolvedSlowClose>): LinkStage => {
    let counted = false;
    return {
      holds: false,
      shape: (pieces) => pieces,
      endDelayMs() {
        const { delayMs } = live.spec;
        if (!counted && delayMs > 0) {
          counted = true;
          live.counters.applications++;
          live.counters.delayAddedMs += delayMs;
        }
        return delayMs;
      },
      detach() {},
    };
  };
  return liveFault(spec, attach, { updatable: true });
}
