/**
 * What an experiment run returns: every figure the reports show, as plain JSON (the MCP tool's
 * structuredContent, `--json`, the run record). Times are ms from the start of the load.
 */
import type { ErrorClass, GeneratorLateness, Stats } from '../load/index.js';
import type { ProbeVerdict } from '../probe/index.js';
import type { Slis } from '../toolcall/metrics.js';
import type { Experiment, Expectation } from './model.js';
import type { PromqlObservation } from './promql-watch.js';

export type ExpectationStatus = 'passed' | 'failed' | 'inconclusive' | 'not_checked';
import type { Verdict } from '../kernel/verdict.js';

export type { Verdict };

export interface ExpectationVerdict {
  id: string;
  title: string;
  kind: Expectation['kind'] | 'recover_within' | 'toolcall' | 'probe' | 'abort' | 'text';
  role: string;
  window: { label: string; fromMs: number; toMs: number } | null;
  status: ExpectationStatus;
  /** The figure it was judged on, as said: "errors 34.2% (limit 5%)", "recovered 2.1 s after the last fault". */
  figure: string;
  /** When it broke (failed), or when it was settled. */
  atMs: number | null;
  /** Why, in a sentence: what broke, or why nothing could be said. */
  reason: string;
}

export interface FaultRecord {
  index: number;
  name: string;
  /** The fault's type as written, and where it was set: #mapping or plane/target. */
  type: string;
  where: string;
  plannedFromMs: number;
  plannedToMs: number;
  /** When it was really switched on and off (null: never). */
  onAtMs: number | null;
  offAtMs: number | null;
  acted: boolean | null;
  actedDetail: string;
}

export interface PlaneStepRecord {
  index: number;
  name: string;
  kind: 'toolcall' | 'probe';
  startedAtMs: number | null;
  endedAtMs: number | null;
  slis?: Slis;
  probe?: {
    verdict: ProbeVerdict;
    summary: Record<string, number>;
    failedLeaves: string[];
    leaves: Array<{ id: string; status: string }>;
  };
  error?: string;
}

export interface TimelineBucket {
  fromMs: number;
  toMs: number;
  requests: number;
  errors: number;
  errorPercent: number | null;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

export interface CheckObservation {
  atMs: number;
  ok: boolean;
  detail: string;
}

export interface LoadSummary {
  url: string;
  method: string;
  ratePerSecond: number;
  achievedRatePerSecond: number;
  clients: number;
  durationMs: number;
  timeoutMs: number;
  requests: number;
  errors: number;
  errorsByClass: Record<ErrorClass, number>;
  errorDetails: Record<string, number>;
  statusCodes: Record<string, number>;
  latency: Stats | null;
  queued: number;
  connectionsOpened: number;
  /** The load generator's own lateness (load/generator-behind.ts); when `behind`, the reasons carry a warning. */
  generatorLate: GeneratorLateness;
}

export interface ExperimentResult {
  title: string;
  description: string;
  /** The file's format: faultline's, or mcp-chaos-monkey's scenario JSON. */
  fileFormat: Experiment['format'];
  startedAt: string;
  endedAt: string;
  seed: number | string | null;
  durationMs: number;
  load: LoadSummary | null;
  proxies: Array<{ mapping: string; port: number }>;
  control: string[];
  phases: Experiment['phases'];
  faults: FaultRecord[];
  steps: PlaneStepRecord[];
  timeline: { bucketMs: number; buckets: TimelineBucket[] };
  /** The same figures per second of the run (the markdown report's table). */
  seconds: TimelineBucket[];
  /** Each PromQL check's polls, by expectation id. */
  promql?: Record<string, PromqlObservation[]>;
  /** Each HTTP check's probes, by expectation id (for the charts' markers). */
  checks: Record<string, CheckObservation[]>;
  commands: Array<{
    id: string;
    startedAtMs: number;
    endedAtMs: number;
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    startError?: string;
    output: string;
  }>;
  expectations: ExpectationVerdict[];
  /** `endedAtMs`: where the run ended, when the abort ended it early (recover_within after it, and a second). */
  aborted: { atMs: number; rule: string; figure: string; endedAtMs?: number } | null;
  rollbacks: Array<{ command: string; exitCode: number | null; timedOut: boolean; startError?: string }>;
  /** Connections the proxies could not make to a dependency, by reason. */
  connectFailures: Record<string, number>;
  /** Dependencies (or the load's url) that accepted no connection before the first fault: the run cannot pass. */
  unreachable: Array<{ where: string; address: string; why: string }>;
  /** Fault names that acted, for the run record (network: latency, …; HTTP: http_error, …; tool-call plane:
   * toolcall:<type>). */
  injected: string[];
  verdict: Verdict;
  verdictReasons: string[];
}
