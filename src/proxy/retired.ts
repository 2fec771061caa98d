/** How a proxy bounds the counters it keeps for faults that left its list. */
/**
 * Faults no longer in a proxy's list whose counters it keeps (the most recent ones): a long-lived
 * proxy whose admin API injects and clears a fault per test must not grow without bound.
 */
export const MAX_RETIRED_FAULTS = 256;

/**
 * The retired entries of a fault list (the faults that left it), oldest first: by when their name joined the list
 * (`seq`, the list's insertion order), so the oldest go past MAX_RETIRED_FAULTS. Kept apart from the list so that a
 * fault going on or off costs the same however many are on.
 */
export class RetiredFaults<V extends { seq: number }> {
  private entries: V[] = [];

  /** `drop` forgets an entry pruned past the bound (deletes it from the list's index). */
  constructor(private readonly drop: (entry: V) => void) {}

  /** Replaces them with `retired`, given in list order, and prunes. */
  reset(retired: V[]): void {
    this.entries = retired;
    this.prune();
  }

  /** One more retired entry (pruned at once past the bound). */
  add(entry: V): void {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.entries[middle]!.seq < entry.seq) low = middle + 1;
      else high = middle;
    }
    this.entries.splice(low, 0, entry);
    this.prune();
  }

  /** An entry no longer retired (on the list again, or replaced by a new fault of its name). */
  delete(entry: V): void {
    const index = this.entries.indexOf(entry);
    if (index !== -1) this.entries.splice(index, 1);
  }

  private prune(): void {
    const excess = this.entries.length - MAX_RETIRED_FAULTS;
    if (excess > 0) for (const entry of this.entries.splice(0, excess)) this.drop(entry);
  }
}
