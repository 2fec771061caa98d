/**
 * The run record of a tool-call chaos run (a proxy's whole life, or a scenario): what
 * `faultline coverage` reads (probe/record.ts), with the faults the run really injected — those
 * that changed what a client received, as the SLIs count them — and the SLIs under `slis`
 * (a record's own `injected` is a list of fault names, the SLIs' a count per fault).
 */
import { byCodeUnits } from '../order.js';
import { RUN_RECORD_FORMAT, RUN_RECORD_VERSION, type RunRecord } from '../kernel/run-record.js';
import type { Slis } from './metrics.js';

export interface ToolcallRunRecord extends RunRecord {
  kind: 'toolcall';
  injected: string[];
  slis: Slis;
}

export function toolcallRunRecord(slis: Slis, name: string, startedAt: Date): ToolcallRunRecord {
  return {
    format: RUN_RECORD_FORMAT,
    version: RUN_RECORD_VERSION,
    kind: 'toolcall',
    name: name.slice(0, 200),
    startedAt: startedAt.toISOString(),
    injected: Object.keys(slis.injected)
      .filter((fault) => (slis.injected[fault] ?? 0) > 0)
      .sort(byCodeUnits),
    slis,
  };
}
