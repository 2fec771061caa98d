/**
 * stall: the link moves no byte while attached (like blackhole, nothing is read, so nothing is
 * lost and the sender is back-pressured), and the connection is closed `timeoutMs` after the
 * fault reached it; with `timeoutMs` 0 it stays held until the fault is removed. Removing the
 * fault closes the connections it held: a client that was stalled sees its connection end, as
 * behind Toxiproxy's `timeout` toxic, whose meaning this is. A sender that ends while held ends the
 * connection at once, as Toxiproxy's toxic closes the receiver on its sender's end.
 */
import {
  liveFault,
  type Fault,
  type FaultTarget,
  type LinkControl,
  type LinkLabel,
  type LinkStage,
  type LiveFault,
} from './fault.js';

export interface StallSpec extends FaultTarget {
  type: 'stall';
  /** Close the connection this long after the fault reached it; 0: hold until the fault is removed. */
  timeoutMs: number;
}

export type ResolvedStall = Required<StallSpec>;

interface Hold {
  since: number;
  control: LinkControl | undefined;
  timer: NodeJS.Timeout | undefined;
}

export function createStall(spec: ResolvedStall, clock: () => number): Fault {
  const holds = new Set<Hold>();
  const arm = (hold: Hold, timeoutMs: number): void => {
    clearTimeout(hold.timer);
    hold.timer = undefined;
    const control = hold.control;
    if (timeoutMs === 0 || !control) return;
    hold.timer = setTimeout(() => control.close(), timeoutMs);
    hold.timer.unref();
  };
  const attach = (link: LinkLabel, live: LiveFault<ResolvedStall>): LinkStage => {
    const hold: Hold = { since: clock(), control: link.control, timer: undefined };
    holds.add(hold);
    live.counters.applications++;
    arm(hold, live.spec.timeoutMs);
    return {
      holds: true,
      shape: (pieces) => pieces,
      // The sender ended (its end read within the 64 KiB the link reads while held): Toxiproxy's
      // timeout toxic closes the connection then, whatever its timeout (0 too), and so does this.
      sourceEnded: () => hold.control?.close(),
      detach(now: number) {
        if (!holds.delete(hold)) return;
        clearTimeout(hold.timer);
        live.counters.timeHeldMs += now - hold.since;
        // Removed while holding (or the connection is closing anyway): the held connection ends.
        hold.control?.close();
      },
    };
  };
  // Toxiproxy restarts the toxic on an update: the timeout counts again from now.
  const updated = (live: LiveFault<ResolvedStall>): void => holds.forEach((hold) => arm(hold, live.spec.timeoutMs));
  return liveFault(spec, attach, { updatable: true, holds, updated });
}
