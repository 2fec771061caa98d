/**
 * The one verdict of a run that judged something: a scenario, an experiment, a probe run. Inconclusive, never
 * passed, when nothing could be judged (no traffic met the fault, nothing was exercised, nothing was checked).
 * A probe keeps mcptest's spelling on its own wire (`pass`/`fail`/`inconclusive`/`error`); `verdictOfProbe`
 * reads it as this one.
 */
export type Verdict = 'passed' | 'failed' | 'inconclusive';

export interface VerdictWithReasons {
  verdict: Verdict;
  /** Why, in the order a report shows them; empty for a plain pass. */
  reasons: string[];
}
