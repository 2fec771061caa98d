/**
 * reset_peer: once data reaches the link, the connection is reset (TCP RST to both ends) after
 * `afterMs`; that data and whatever follows is not passed on, as a reset loses it. Toxiproxy's
 * `reset_peer` toxic.
 */
import { liveFault, type Fault, type FaultTarget, type LinkLabel, type LinkStage, type LiveFault } from './fault.js';

export interface ResetPeerSpec extends FaultTarget {
  type: 'reset_peer';
  /** Reset this long after the first data reached the link (0: at once). */
  afterMs: number;
}

export type ResolvedResetPeer = Required<ResetPeerSpec>;

export function createResetPeer(spec: ResolvedResetPeer): Fault {
  const attach = (link: LinkLabel, live: LiveFault<ResolvedResetPeer>): LinkStage => {
    let timer: NodeJS.Timeout | undefined;
    let armed = false;
    return {
      holds: false,
      shape() {
        if (armed) return [];
        armed = true;
        live.counters.applications++;
        const reset = (): void => link.control?.reset();
        if (live.spec.afterMs === 0) reset();
        else {
          timer = setTimeout(reset, live.spec.afterMs);
          timer.unref();
        }
        return [];
      },
      detach() {
        clearTimeout(timer);
      },
    };
  };
  return liveFault(spec, attach, { updatable: true });
}
