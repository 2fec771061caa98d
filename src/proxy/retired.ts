/** How a proxy bounds the counters it keeps for faults that left its list. */
/**
 * Faults no longer in a proxy's list whose counters it keeps (the most recent ones): a long-lived
 * proxy whose admin API injects and clears a fault per test must not grow without bound.
 */
export const MAX_RETIRED_FAULTS = 256;

/**
 * Deletes the oldest entries `isActive` says are retired, past MAX_RETIRED_FAULTS (a Map keeps insertion order).
 * `activeCount`, when the caller knows how many are active, spares counting (a removal from a long list stays cheap).
 */
export function pruneRetired<V>(entries: Map<string, V>, isActive: (value: V) => boolean, activeCount?: number): void {
  let retired = activeCount === undefined ? 0 : entries.size - activeCount;
  if (activeCount === undefined) for (const value of entries.values()) if (!isActive(value)) retired++;
  if (retired <= MAX_RETIRED_FAULTS) return;
  for (const [key, value] of entries) {
    if (retired <= MAX_RETIRED_FAULTS) break;
    if (isActive(value)) continue;
    entries.delete(key);
    retired--;
  }
}
