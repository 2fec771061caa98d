/** A session's timers (hangs, cuts): each runs unless the session ended first; all cleared at its end. */
export class SessionTimers {
  private readonly timers = new Set<NodeJS.Timeout>();
  private ended = false;

  /** Runs `run` in `ms` ms, unless clear() came first. */
  later(ms: number, run: () => void): void {
    if (this.ended) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  clear(): void {
    this.ended = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
