/**
 * The run record of an experiment (`faultline experiment run --json FILE`), which `faultline
 * coverage` counts (src/probe/record.ts): kind `experiment`; `injected` the faults that really
 * acted (network faults by type; request faults by what they ran on: http_<type>, on a redis://
 * mapping resp_<type>, on a tcp:// one tcp_<type>; tool-call-plane faults as toolcall:<type>); `leaves` what its probe steps found; `verdicts` one per expectation; and the
 * whole result under it.
 */
import { RUN_RECORD_FORMAT, RUN_RECORD_VERSION, type RecordedLeaf, type RunRecord } from '../../kernel/run-record.js';
import type { ExperimentResult } from '../result.js';

export interface ExperimentRunRecord extends RunRecord, Omit<ExperimentResult, 'startedAt'> {
  kind: 'experiment';
  injected: string[];
  verdicts: Array<{ expectation: string; status: string }>;
}

export function experimentRunRecord(result: ExperimentResult): ExperimentRunRecord {
  const leaves = new Map<string, RecordedLeaf>();
  for (const step of result.steps)
    for (const leaf of step.probe?.leaves ?? [])
      leaves.set(leaf.id, { id: leaf.id, status: leaf.status as RecordedLeaf['status'] });
  return {
    ...result,
    format: RUN_RECORD_FORMAT,
    version: RUN_RECORD_VERSION,
    kind: 'experiment',
    name: `experiment ${result.title}`.slice(0, 200),
    ...(leaves.size > 0 ? { leaves: [...leaves.values()] } : {}),
    verdicts: result.expectations.map((expectation) => ({
      expectation: expectation.title,
      status: expectation.status,
    })),
  };
}
