/**
 * The definitions of the last few sources parsed, so that what an agent does next — list a
 * file's functions, then extract one or two of them — parses the file once, not once per call.
 * Keyed by language and the full source text (not a path: an edited file is a new key), and
 * bounded both in entries and in the source bytes the keys hold. Results are plain offsets, so a
 * hit returns exactly what a parse would; callers must not mutate what they get.
 */
const MAX_ENTRIES = 32;
const MAX_SOURCE_CHARS = 8 * 1024 * 1024;

export class DefinitionCache<T> {
  private readonly entries = new Map<string, T>();
  private chars = 0;

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxChars = MAX_SOURCE_CHARS,
  ) {}

  async get(language: string, source: string, compute: () => Promise<T>): Promise<T> {
    const key = `${language}\u0000${source}`;
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      // Most recently used last, so eviction takes the oldest first.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const value = await compute();
    if (key.length <= this.maxChars) {
      this.entries.set(key, value);
      this.chars += key.length;
      for (const [oldest] of this.entries) {
        if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) break;
        this.entries.delete(oldest);
        this.chars -= oldest.length;
      }
    }
    return value;
  }
}
