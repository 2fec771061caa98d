/**
 * stall: the link moves no byte while attached (like blackhole, nothing is read, so nothing is
 * lost and the sender is back-pressured), and the connection is closed `timeoutMs` after the
 * fault reached it; with `timeoutMs` 0 it stays held until the fault is removed. Removing the
 * fault closes the connections it held: a client that was stalled sees its connection end, as
 * behind Toxiproxy's `timeout` toxic, whose meaning this is.
 */
import {
  emptyCounters,
  MILLISECONDS,
  SpecReader,
  type Fault,
  type FaultTarget,
  type LinkControl,
  type LinkLabel,
  type LinkStage,
} from './fault.js';

export interface StallSpec extends FaultTarget {
  type: 'stall';
  /** Close the connection this long after the fault reached it; 0: hold until the fault is removed. */
  timeoutMs: number;
}

export type ResolvedStall = Required<StallSpec>;

/** The fields of a stall spec, defined once (timeoutMs: ms in 0..3600000). */
export function readStall(reader: SpecReader): ResolvedStall {
  const spec: ResolvedStall = {
    type: 'stall',
    ...reader.target(),
    timeoutMs: reader.number('timeoutMs', MILLISECONDS),
  };
  reader.done();
  return spec;
}

interface Hold {
  since: number;
  control: LinkControl | undefined;
  timer: NodeJS.Timeout | undefined;
}

export function createStall(initial: ResolvedStall, clock: () => number): Fault {
  let spec = initial;
  const counters = emptyCounters(spec.name, spec.type);
  const holds = new Set<Hold>();
  const arm = (hold: Hold): void => {
    clearTimeout(hold.timer);
    hold.timer = undefined;
    if (spec.timeoutMs === 0 || !hold.control) return;
    const control = hold.control;
    hold.timer = setTimeout(() => control.close(), spec.timeoutMs);
    hold.timer.unref();
  };
  return {
    counters,
    snapshot(now: number) {
      let live = 0;
      for (const hold of holds) live += now - hold.since;
      return { ...counters, timeHeldMs: counters.timeHeldMs + live };
    },
    update(next) {
      if (next.type !== 'stall') return false;
      spec = next as ResolvedStall;
      // Toxiproxy restarts the toxic on an update: the timeout counts again from now.
      for (const hold of holds) arm(hold);
      return true;
    },
    attach(link: LinkLabel): LinkStage {
      const hold: Hold = { since: clock(), control: link.control, timer: undefined };
      holds.add(hold);
      counters.applications++;
      arm(hold);
      return {
        holds: true,
        shape: (pieces) => pieces,
        detach(now: number) {
          if (!holds.delete(hold)) return;
          clearTimeout(hold.timer);
          counters.timeHeldMs += now - hold.since;
          // Removed while holding (or the connection is closing anyway): the held connection ends.
          hold.control?.close();
        },
      };
    },
  };
}
