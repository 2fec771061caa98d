/**
 * blackhole: while attached, the link moves no byte (and no end-of-stream). By default it is
 * attached both ways (direction both), as tc, FIS and Chaos Mesh drop traffic: the requests do not
 * reach the remote and nothing is answered; direction ingress or egress holds one half. Nothing is dropped:
 * the link pauses its source socket, so the sender is back-pressured by TCP and the proxy's memory
 * does not grow; whatever was already read waits and flows, intact and in order, once the fault
 * is switched off. Clients wait until their own timeout, as behind a real blackhole.
 */
import { liveFault, type Fault, type FaultTarget, type LinkLabel, type LinkStage, type LiveFault } from './fault.js';

export interface BlackholeSpec extends FaultTarget {
  type: 'blackhole';
}

export type ResolvedBlackhole = Required<BlackholeSpec>;

export function createBlackhole(spec: ResolvedBlackhole, clock: () => number): Fault {
  const holds = new Set<{ since: number }>();
  const attach = (_link: LinkLabel, { counters }: LiveFault<ResolvedBlackhole>): LinkStage => {
    const hold = { since: clock() };
    holds.add(hold);
    counters.applications++;
    return {
      holds: true,
      shape: (pieces) => pieces,
      detach(now: number) {
        if (!holds.delete(hold)) return;
        counters.timeHeldMs += now - hold.since;
      },
    };
  };
  return liveFault(spec, attach, { holds });
}
