/**
 * The run record: one JSON file per run of something that exercises faults (a probe run, a
 * tool-call chaos plan, a network or HTTP scenario). Probe runs write it (`--json FILE`);
 * `faultline coverage` reads it. Small on purpose: which leaves a run exercised and with what
 * outcome, or (for injection runs) which faults it injected, which the taxonomy maps to leaves.
 *
 * {
 *   "format": "faultline-run-record", "version": 1,
 *   "kind": "probe" | "toolcall" | "network" | "scenario" | "experiment",
 *   "name": "…", "startedAt": "ISO-8601", "taxonomyVersion": "…",
 *   "leaves": [{ "id": "FAULT-…", "status": "passed" | "failed" | "warning" | "n/a" | "inconclusive" | "untested" }],
 *     (failed: a failure was found; warning: only warnings were — both exercised the leaf; n/a:
 *     the leaf does not apply to this server; untested: it applies, but the run could not
 *     exercise it — coverage keeps it in the denominator, not exercised)
 *   "injected": ["latency", …]           // injection runs: fault names (an experiment names its
 *                                         // tool-call-plane faults "toolcall:<type>")
 * }
 */
export const RUN_RECORD_FORMAT = 'faultline-run-record';
export const RUN_RECORD_VERSION = 1;

export type LeafStatus = 'passed' | 'failed' | 'warning' | 'n/a' | 'inconclusive' | 'untested';
export const RUN_KINDS = ['probe', 'toolcall', 'network', 'scenario', 'experiment'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** A kind as written, with the tool-call plane's earlier name (`toolplane`) read as `toolcall`. */
export function runKindOf(kind: unknown): RunKind | undefined {
  const name = kind === 'toolplane' ? 'toolcall' : kind;
  return (RUN_KINDS as readonly unknown[]).includes(name) ? (name as RunKind) : undefined;
}

export interface RecordedLeaf {
  id: string;
  status: LeafStatus;
}

export interface RunRecord {
  format: typeof RUN_RECORD_FORMAT;
  version: typeof RUN_RECORD_VERSION;
  kind: RunKind;
  name: string;
  startedAt: string;
  taxonomyVersion?: string;
  leaves?: RecordedLeaf[];
  injected?: string[];
}

export const LEAF_STATUSES = [
  'passed',
  'failed',
  'warning',
  'n/a',
  'inconclusive',
  'untested',
] as const satisfies readonly LeafStatus[];
const STATUSES: readonly string[] = LEAF_STATUSES;

/** Checks a parsed record; returns the problems (empty when it is usable). */
export function recordProblems(data: unknown): string[] {
  const r = data as Partial<RunRecord> | null;
  if (!r || typeof r !== 'object') return ['not a JSON object'];
  const problems: string[] = [];
  if (r.format !== RUN_RECORD_FORMAT) problems.push(`format must be "${RUN_RECORD_FORMAT}"`);
  if (r.version !== RUN_RECORD_VERSION) problems.push(`version must be ${RUN_RECORD_VERSION}`);
  if (runKindOf(r.kind) === undefined) problems.push(`kind must be one of ${RUN_KINDS.join(', ')}`);
  if (
    r.leaves !== undefined &&
    (!Array.isArray(r.leaves) || r.leaves.some((l) => typeof l?.id !== 'string' || !STATUSES.includes(l?.status)))
  ) {
    problems.push(`leaves must be [{id, status: ${STATUSES.join('|')}}]`);
  }
  if (r.injected !== undefined && (!Array.isArray(r.injected) || r.injected.some((f) => typeof f !== 'string')))
    problems.push('injected must be an array of fault names');
  return problems;
}
