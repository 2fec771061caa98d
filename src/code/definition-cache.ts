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
  /**
   * By the source itself, then by language: a key built from the source (language + source)
   * would be a new string that V8 copies whole on every lookup, milliseconds for a large file.
   * Map order is recency, oldest first.
   */
  private readonly bySource = new Map<string, Map<string, T>>();
  private entries = 0;
  private chars = 0;

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxChars = MAX_SOURCE_CHARS,
  ) {}

  async get(language: string, source: string, compute: () => Promise<T>): Promise<T> {
    const languages = this.bySource.get(source);
    const hit = languages?.get(language);
    if (languages && hit !== undefined) {
      // Most recently used last, so eviction takes the oldest first.
      this.bySource.delete(source);
      this.bySource.set(source, languages);
      return hit;
    }
    const value = await compute();
    if (source.length <= this.maxChars) this.keep(language, source, value);
    return value;
  }

  private keep(language: string, source: string, value: T): void {
    // Looked up again: another call may have kept this source while compute ran.
    const languages = this.bySource.get(source) ?? new Map<string, T>();
    this.bySource.delete(source);
    this.bySource.set(source, languages);
    if (!languages.has(language)) {
      this.entries++;
      if (languages.size === 0) this.chars += source.length;
    }
    languages.set(language, value);
    for (const [oldest, kept] of this.bySource) {
      if (this.entries <= this.maxEntries && this.chars <= this.maxChars) break;
      this.bySource.delete(oldest);
      this.entries -= kept.size;
      this.chars -= oldest.length;
    }
  }
}
