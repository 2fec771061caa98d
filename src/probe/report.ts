/**
 * The probe's report: a run record (record.ts) with every leaf's result and finding, what was
 * probed, and the verdict derived from it.
 */
import type { Verdict } from '../kernel/verdict.js';
import type { LeafResult } from './findings.js';
import type { Target } from './peer/index.js';
import { RUN_RECORD_FORMAT, RUN_RECORD_VERSION, type RunRecord } from '../kernel/run-record.js';
import type { Taxonomy } from './taxonomy.js';

export interface ProbeSummary {
  /** Leaves by status. */
  passed: number;
  failed: number;
  warning: number;
  notApplicable: number;
  inconclusive: number;
  untested: number;
  /** Findings (a grouped finding counts once), and of them failures and warnings. */
  findings: number;
  failures: number;
  warnings: number;
}

export interface ProbeReport extends RunRecord {
  kind: 'probe';
  target: string;
  transport: 'stdio' | 'http';
  durationMs: number;
  server?: { name?: string; version?: string; protocolVersion?: string; capabilities?: Record<string, unknown> };
  leaves: LeafResult[];
  summary: ProbeSummary;
  tools: { listed: number; called: string[]; skipped: string[] };
  /** Set when the server could not be probed at all (no initialize). */
  error?: string;
  /** Set when the target could not even be started (a stdio command that cannot be spawned): the input is wrong, not
   * the server. */
  startError?: string;
}

export type ProbeVerdict = 'pass' | 'fail' | 'inconclusive' | 'error';

/**
 * The run's verdict: error (not probed at all), fail (a leaf has a failure), inconclusive
 * (nothing failed but nothing was exercised either: a run that tested nothing must not read as
 * a pass), else pass — warnings included, which the summary counts. As with a test runner's
 * skips, untested leaves do not turn a pass into something else; each says why.
 */
export function probeVerdict(report: Pick<ProbeReport, 'error' | 'summary'>): ProbeVerdict {
  if (report.error) return 'error';
  if (report.summary.failed > 0) return 'fail';
  return report.summary.passed + report.summary.warning > 0 ? 'pass' : 'inconclusive';
}

/** The probe's verdict as every other run's: an unprobed server (error) tested nothing, so it is inconclusive. */
export function verdictOfProbe(verdict: ProbeVerdict): Verdict {
  return verdict === 'pass' ? 'passed' : verdict === 'fail' ? 'failed' : 'inconclusive';
}

export function describeTarget(target: Target): string {
  return target.kind === 'stdio' ? [target.command, ...target.args].join(' ') : target.url;
}

export function emptyReport(target: Target, taxonomy: Taxonomy, started: number): ProbeReport {
  return {
    format: RUN_RECORD_FORMAT,
    version: RUN_RECORD_VERSION,
    kind: 'probe',
    name: `probe ${describeTarget(target)}`.slice(0, 200),
    startedAt: new Date(started).toISOString(),
    taxonomyVersion: taxonomy.version,
    target: describeTarget(target),
    transport: target.kind,
    durationMs: 0,
    leaves: [],
    summary: summarise([]),
    tools: { listed: 0, called: [], skipped: [] },
  };
}

export function summarise(leaves: readonly LeafResult[]): ProbeSummary {
  const summary: ProbeSummary = {
    passed: 0,
    failed: 0,
    warning: 0,
    notApplicable: 0,
    inconclusive: 0,
    untested: 0,
    findings: 0,
    failures: 0,
    warnings: 0,
  };
  for (const leaf of leaves) {
    if (leaf.status === 'n/a') summary.notApplicable++;
    else summary[leaf.status]++;
    for (const finding of leaf.findings) {
      summary.findings++;
      if (finding.severity === 'failure') summary.failures++;
      else summary.warnings++;
    }
  }
  return summary;
}
