/**
 * The run record of an impact scenario (`faultline run --json FILE`): what `faultline coverage`
 * reads (probe/record.ts). The whole result is kept (every number, as before), with the record's
 * own keys on top:
 *
 * - `injected`: the faults that really acted during the run, from the proxy's own counters
 *   (proxy/run-record.ts: a fault whose window no request crossed injected nothing).
 * - `verdict` (the scenario's, passed | failed | inconclusive, already in the result) and
 *   `verdicts`: one `{ slo, status }` per SLO of the fault phase, in the status words probe
 *   records use for leaves (passed | failed; `untested` for an SLO a capacity run could not
 *   evaluate).
 */
import { RUN_RECORD_FORMAT, RUN_RECORD_VERSION, type LeafStatus, type RunRecord } from '../kernel/run-record.js';
import { faultsThatActed } from '../proxy/run-record.js';
import type { ScenarioResult } from './result.js';

export interface SloVerdict {
  slo: string;
  status: Extract<LeafStatus, 'passed' | 'failed' | 'untested'>;
}

export interface ScenarioRunRecord extends RunRecord, Omit<ScenarioResult, 'startedAt'> {
  kind: 'scenario';
  injected: string[];
  verdicts: SloVerdict[];
}

export function scenarioRunRecord(result: ScenarioResult): ScenarioRunRecord {
  const verdicts: SloVerdict[] = [
    ...result.run.slos.map((slo) => ({ slo: slo.title, status: slo.pass ? ('passed' as const) : ('failed' as const) })),
    ...result.run.slosNotEvaluated.map((slo) => ({ slo, status: 'untested' as const })),
  ];
  return {
    format: RUN_RECORD_FORMAT,
    version: RUN_RECORD_VERSION,
    kind: 'scenario',
    name: `${result.fault.type} scenario ${result.url}`.slice(0, 200),
    injected: faultsThatActed(result.run.proxy), // the fault phase's proxy; the baseline runs without a fault
    verdicts,
    ...result,
  };
}
