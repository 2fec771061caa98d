/**
 * blackhole: while attached, the link moves no byte (and no end-of-stream). By default it is
 * attached both ways (direction both), as tc, FIS and Chaos Mesh drop traffic: the requests do not
 * reach the remote and nothing is answered; direction ingress or egress holds one half. A
 * connection that opens while it is on is not dialled at all (a dropped SYN never reaches the
 * server, whatever the direction): the remote is dialled when the fault ends, if the client still
 * waits, and gets what the client sent meanwhile, as TCP's retransmission would deliver it.
 * Nothing is dropped while the client waits: the link pauses its source socket once a little is
 * read, so the sender is back-pressured by TCP and the proxy's memory does not grow. A client that
 * leaves while held (its end of stream read) has its held bytes dropped, never delivered later
 * (connection.ts). Clients wait until their own timeout, as behind a real blackhole.
 *
 * Counted per connection: `applications` is the connections it held, `timeHeldMs` their time held.
 */
import { liveFault, type Fault, type FaultTarget, type LinkLabel, type LinkStage, type LiveFault } from './fault.js';

export interface BlackholeSpec extends FaultTarget {
  type: 'blackhole';
}

export type ResolvedBlackhole = Required<BlackholeSpec>;

export function createBlackhole(spec: ResolvedBlackhole, clock: () => number): Fault {
  // One hold per connection held now, however many of its links (or its dial) the fault holds.
  const holds = new Map<number, { since: number; stages: number }>();
  const attach = (link: LinkLabel, { counters }: LiveFault<ResolvedBlackhole>): LinkStage => {
    let hold = holds.get(link.connectionId);
    if (!hold) {
      hold = { since: clock(), stages: 0 };
      holds.set(link.connectionId, hold);
      counters.applications++;
    }
    hold.stages++;
    const connectionHold = hold;
    let attached = true;
    return {
      holds: true,
      shape: (pieces) => pieces,
      detach(now: number) {
        if (!attached) return;
        attached = false;
        if (--connectionHold.stages > 0) return;
        holds.delete(link.connectionId);
        counters.timeHeldMs += now - connectionHold.since;
      },
    };
  };
  return { ...liveFault(spec, attach, { holds }), holdsConnect: true };
}
