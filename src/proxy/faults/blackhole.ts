/**
 * blackhole: while attached, the link moves no byte (and no end-of-stream). By default it is
 * attached both ways (direction both), as tc, FIS and Chaos Mesh drop traffic: the requests do not
 * reach the remote and nothing is answered; direction ingress or egress holds one half. Nothing is dropped:
 * the link pauses its source socket, so the sender is back-pressured by TCP and the proxy's memory
 * does not grow; whatever was already read waits and flows, intact and in order, once the fault
 * is switched off. Clients wait until their own timeout, as behind a real blackhole.
 */
import { emptyCounters, SpecReader, type Fault, type FaultTarget, type LinkStage } from './fault.js';

export interface BlackholeSpec extends FaultTarget {
  type: 'blackhole';
}

export type ResolvedBlackhole = Required<BlackholeSpec>;

export function readBlackhole(reader: SpecReader): ResolvedBlackhole {
  const spec: ResolvedBlackhole = { type: 'blackhole', ...reader.target('both') };
  reader.done();
  return spec;
}

export function createBlackhole(spec: ResolvedBlackhole, clock: () => number): Fault {
  const counters = emptyCounters(spec.name, spec.type);
  const holdsSince = new Set<{ since: number }>();
  return {
    counters,
    snapshot(now: number) {
      let live = 0;
      for (const hold of holdsSince) live += now - hold.since;
      return { ...counters, timeHeldMs: counters.timeHeldMs + live };
    },
    attach(): LinkStage {
      const hold = { since: clock() };
      holdsSince.add(hold);
      counters.applications++;
      return {
        holds: true,
        shape: (pieces) => pieces,
        detach(now: number) {
          if (!holdsSince.delete(hold)) return;
          counters.timeHeldMs += now - hold.since;
        },
      };
    },
  };
}
