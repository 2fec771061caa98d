/**
 * The definitions of the last few sources parsed, so that what an agent does next — list a
 * file's functions, then extract one or two of them — parses the file once, not once per call.
 * Keyed by language and the full source text (not a path: an edited file is a new key), and
 * bounded both in entries and in the source bytes the keys hold. Results are plain offsets, so a
 * hit returns exactly what a parse would; callers must not mutate what they get.
 */
const MAX_ENTRIES = 32;
const MAX_SOURCE_CHARS = 8 * 1024 * 1024;
/** How many characters of a source's head and tail its probe holds. */
const PROBE_CHARS = 64;

interface Entry<T> {
  source: string;
  probe: string;
  byLanguage: Map<string, T>;
}

export class DefinitionCache<T> {
  /**
   * Sources by a probe (length, head and tail), then compared whole. Keyed by the source itself,
   * a lookup compared a new source with every kept one of its length (V8 hashes a string over
   * 16K characters by its length alone), in full when they differed only near the end (a
   * file edited at its end): ~0.5 ms per lookup of a 100 kB file among 32 of that length. A key
   * built from the whole source would be a new string V8 copies on every lookup.
   */
  private readonly byProbe = new Map<string, Entry<T>[]>();
  /** Every entry, most recently used last, so eviction takes the oldest first. */
  private readonly recency = new Set<Entry<T>>();
  private entries = 0;
  private chars = 0;

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxChars = MAX_SOURCE_CHARS,
  ) {}

  async get(language: string, source: string, compute: () => Promise<T>): Promise<T> {
    const probe = probeOf(source);
    const entry = this.find(probe, source);
    const hit = entry?.byLanguage.get(language);
    if (entry && hit !== undefined) {
      this.touch(entry);
      return hit;
    }
    const value = await compute();
    if (source.length <= this.maxChars) this.keep(language, source, probe, value);
    return value;
  }

  private find(probe: string, source: string): Entry<T> | undefined {
    return this.byProbe.get(probe)?.find((entry) => entry.source === source);
  }

  private touch(entry: Entry<T>): void {
    this.recency.delete(entry);
    this.recency.add(entry);
  }

  private keep(language: string, source: string, probe: string, value: T): void {
    // Looked up again: another call may have kept this source while compute ran.
    let entry = this.find(probe, source);
    if (!entry) {
      entry = { source, probe, byLanguage: new Map() };
      const bucket = this.byProbe.get(probe);
      if (bucket) bucket.push(entry);
      else this.byProbe.set(probe, [entry]);
      this.chars += source.length;
    }
    this.touch(entry);
    if (!entry.byLanguage.has(language)) this.entries++;
    entry.byLanguage.set(language, value);
    for (const oldest of this.recency) {
      if (this.entries <= this.maxEntries && this.chars <= this.maxChars) break;
      this.forget(oldest);
    }
  }

  private forget(entry: Entry<T>): void {
    this.recency.delete(entry);
    const bucket = this.byProbe.get(entry.probe)!;
    bucket.splice(bucket.indexOf(entry), 1);
    if (bucket.length === 0) this.byProbe.delete(entry.probe);
    this.entries -= entry.byLanguage.size;
    this.chars -= entry.source.length;
  }
}

/** A short key that tells most different sources apart without reading them whole. */
function probeOf(source: string): string {
  if (source.length <= 2 * PROBE_CHARS) return `${source.length}\0${source}`;
  return `${source.length}\0${source.slice(0, PROBE_CHARS)}\0${source.slice(-PROBE_CHARS)}`;
}
