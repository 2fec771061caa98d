/**
 * The response faults one exchange drew, each counted once when the exchange settles: `applications` for one that
 * changed what the client got, `unchanged` for one that met the exchange and changed nothing (its change was none, an
 * earlier fault cut the exchange, the upstream failed or the client left first), `oversized` for a body too large to
 * rewrite. Counted at the outcome, never at the draw and taken back, so `applications` only goes up: a Prometheus
 * counter that fell between two scrapes would read as a reset and spike `rate()`.
 */
import type { HttpFaultCounters } from './fault.js';

interface Counted {
  counters: HttpFaultCounters;
}

export class ResponseTally<Entry extends Counted> {
  private readonly settled = new Set<Entry>();

  constructor(readonly entries: readonly Entry[]) {}

  applied(entry: Entry): void {
    if (this.settle(entry)) entry.counters.applications++;
  }

  unchanged(entry: Entry): void {
    if (this.settle(entry)) entry.counters.unchanged++;
  }

  /** Every fault not counted yet was too large to act on. */
  oversized(): void {
    for (const entry of this.entries) if (this.settle(entry)) entry.counters.oversized++;
  }

  /** Every fault not counted yet met the exchange and changed nothing (it ended without them). */
  rest(): void {
    for (const entry of this.entries) if (this.settle(entry)) entry.counters.unchanged++;
  }

  private settle(entry: Entry): boolean {
    if (this.settled.has(entry)) return false;
    this.settled.add(entry);
    return true;
  }
}
