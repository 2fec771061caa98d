/**
 * Fault-family coverage: which leaves of the taxonomy the runs a project makes actually
 * exercised, from their run records (record.ts), not from what a suite file merely lists.
 *
 * A suite (YAML):
 *   version: 1
 *   name: my-server            # optional
 *   agents: false              # true when the project drives agents (PROVIDER applies)
 *   runs:
 *     - { name: stdio-probe, kind: probe, record: runs/probe.json }
 *     - { name: chaos-plan, kind: toolcall, record: runs/plan.json }
 *     - { name: latency, kind: network, record: runs/latency.json }
 * Record paths are relative to the suite file. A run whose record is missing did not run.
 *
 * A leaf is exercised when a record says it passed, failed, warned or was inconclusive (a probe
 * ran for it), or when an injection run injected a fault the taxonomy maps to it; it failed when
 * a record says so (exercised and failing are apart: a family can be covered and failing). A leaf every record
 * calls n/a (an HTTP check on a stdio server) leaves the denominator; one a record calls untested
 * (it applies, but that run could not exercise it) stays in it, not exercised. Per family: covered (every
 * applicable leaf exercised), partial, uncovered, n/a (no applicable leaf; PROVIDER without
 * agents unless a run exercised it).
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { InputError, messageOf } from '../kernel/errors.js';
import { unknownKeysProblem } from '../config-reader.js';
import { recordProblems, RUN_KINDS, runKindOf, type RunKind, type RunRecord } from '../kernel/run-record.js';
import { familyOf, type FamilyId, type Taxonomy } from './taxonomy.js';

export interface SuiteRun {
  name: string;
  kind: RunKind;
  record: string;
}

export interface Suite {
  version: 1;
  name?: string;
  agents: boolean;
  runs: SuiteRun[];
  /** The directory record paths are relative to. */
  baseDir: string;
}

export type FamilyStatus = 'covered' | 'partial' | 'uncovered' | 'n/a';

export interface LeafCoverage {
  id: string;
  family: FamilyId;
  exercised: boolean;
  applicable: boolean;
  /** A run exercised it and found a failure there (a leaf can be exercised, even covered, and failing). */
  failed: boolean;
  /** The runs (or named probes) that exercised it, with the outcome when a probe reported one. */
  by: Array<{ run: string; status: string }>;
}

export interface FamilyCoverage {
  id: FamilyId;
  name: string;
  status: FamilyStatus;
  exercised: number;
  applicable: number;
  /** Exercised leaves of the family that failed. */
  failed: number;
}

export interface CoverageReport {
  suite?: string;
  /** --no-suite: the probes scored (as named, aliases resolved). */
  probes?: string[];
  taxonomyVersion: string;
  runs: Array<{ name: string; kind: RunKind; record: string; ran: boolean; problem?: string }>;
  families: FamilyCoverage[];
  leaves: LeafCoverage[];
  /** Exercised applicable leaves / applicable leaves, 0-100 (one decimal). */
  percent: number;
  exercised: number;
  applicable: number;
  /** Exercised leaves a run found failing. */
  failed: number;
  /** Families with every applicable leaf exercised, of those with any applicable leaf. */
  familiesCovered: number;
  familiesApplicable: number;
}

export async function loadSuite(file: string): Promise<Suite> {
  const { parse } = await import('yaml');
  let data: unknown;
  try {
    data = parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new InputError(`suite ${file}: ${messageOf(error)}`);
  }
  const s = data as { version?: unknown; name?: unknown; agents?: unknown; runs?: unknown } | null;
  const problems: string[] = [];
  if (!s || typeof s !== 'object') throw new InputError(`suite ${file}: expected a YAML mapping with version and runs`);
  const unknown = unknownKeysProblem(s as Record<string, unknown>, ['version', 'name', 'agents', 'runs'], 'the suite');
  if (unknown !== undefined) problems.push(unknown);
  if (s.version !== 1) problems.push('version must be 1');
  if (s.agents !== undefined && typeof s.agents !== 'boolean') problems.push('agents must be true or false');
  if (!Array.isArray(s.runs)) problems.push('runs must be a list of {name, kind, record}');
  const runs: SuiteRun[] = [];
  for (const [i, run] of (Array.isArray(s.runs) ? s.runs : []).entries()) {
    const r = run as Partial<SuiteRun> | null;
    const kind = runKindOf(r?.kind);
    if (!r || typeof r.name !== 'string' || typeof r.record !== 'string' || kind === undefined) {
      problems.push(`runs[${i}] needs name, record (a path) and kind (${RUN_KINDS.join('|')})`);
      continue;
    }
    runs.push({ name: r.name, kind, record: r.record });
  }
  if (problems.length > 0) throw new InputError(`suite ${file}: ${problems.join('; ')}`);
  return {
    version: 1,
    name: typeof s.name === 'string' ? s.name : undefined,
    agents: s.agents === true,
    runs,
    baseDir: dirname(resolve(file)),
  };
}

async function readRecord(path: string): Promise<{ record?: RunRecord; problem?: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { problem: 'no record (the run did not run)' };
  }
  try {
    const data = JSON.parse(text) as unknown;
    const problems = recordProblems(data);
    return problems.length > 0 ? { problem: `unusable record: ${problems.join('; ')}` } : { record: data as RunRecord };
  } catch (error) {
    return { problem: `unreadable record: ${messageOf(error)}` };
  }
}

/** Coverage of the suite's runs (only those named in `only`, when given). */
export async function computeCoverage(
  suite: Suite,
  taxonomy: Taxonomy,
  only: string[] = [],
  suiteName?: string,
): Promise<CoverageReport> {
  const unknown = only.filter((name) => !suite.runs.some((run) => run.name === name));
  if (unknown.length > 0)
    throw new InputError(
      `--probe: no run named ${unknown.join(', ')} in the suite (it ` +
        `has: ${suite.runs.map((r) => r.name).join(', ') || 'none'})`,
    );
  const runs = only.length > 0 ? suite.runs.filter((run) => only.includes(run.name)) : suite.runs;
  const seen: Seen = { hits: new Map(), notApplicable: new Set(), untested: new Set() };
  const reportRuns: CoverageReport['runs'] = [];
  for (const run of runs) {
    const { record, problem } = await readRecord(resolve(suite.baseDir, run.record));
    reportRuns.push({
      name: run.name,
      kind: run.kind,
      record: run.record,
      ran: record !== undefined,
      ...(problem ? { problem } : {}),
    });
    if (!record) continue;
    for (const leaf of record.leaves ?? []) {
      if (leaf.status === 'n/a') seen.notApplicable.add(leaf.id);
      else if (leaf.status === 'untested') seen.untested.add(leaf.id);
      else hit(seen, leaf.id, run.name, leaf.status);
    }
    const recordKind = runKindOf(record.kind);
    for (const fault of record.injected ?? [])
      for (const id of injectedLeaves(taxonomy, recordKind, fault)) hit(seen, id, run.name, `injected ${fault}`);
  }
  return tally(taxonomy, seen, suite.agents, { ...(suiteName ? { suite: suiteName } : {}), runs: reportRuns });
}

/**
 * Coverage without a suite (`--no-suite --probe NAME…`): the leaves the named probes exercise,
 * by the taxonomy's probe → leaf mapping (or its aliases, e.g. mcptest's `fuzz`), scored as a
 * suite that ran exactly those probes would be. PROVIDER applies only when a named probe
 * exercises it, as there is no suite to say it drives agents.
 */
export function scoreProbes(taxonomy: Taxonomy, probes: readonly string[]): CoverageReport {
  const known = new Set(taxonomy.leaves.flatMap((leaf) => leaf.probes));
  const aliases = taxonomy.probeAliases ?? {};
  const unknown = probes.filter((name) => !known.has(name) && !(name in aliases));
  if (unknown.length > 0) {
    throw new InputError(
      `--probe: no probe named ${unknown.join(', ')} (accepted: ` +
        `${[...known, ...Object.keys(aliases)].sort().join(', ')})`,
    );
  }
  const named = [...new Set(probes.flatMap((name) => aliases[name] ?? [name]))];
  const seen: Seen = { hits: new Map(), notApplicable: new Set(), untested: new Set() };
  for (const leaf of taxonomy.leaves)
    for (const probe of leaf.probes.filter((p) => named.includes(p))) hit(seen, leaf.id, `probe ${probe}`, 'named');
  return tally(taxonomy, seen, false, { probes: named, runs: [] });
}

interface Seen {
  hits: Map<string, Array<{ run: string; status: string }>>;
  notApplicable: Set<string>;
  untested: Set<string>;
}

function hit(seen: Seen, leaf: string, run: string, status: string): void {
  seen.hits.set(leaf, [...(seen.hits.get(leaf) ?? []), { run, status }]);
}

/** Per leaf and family, from what the runs exercised; then the totals. */
function tally(
  taxonomy: Taxonomy,
  seen: Seen,
  agents: boolean,
  head: Pick<CoverageReport, 'suite' | 'probes' | 'runs'>,
): CoverageReport {
  const leaves: LeafCoverage[] = taxonomy.leaves.map((leaf) => {
    const family = familyOf(leaf.id)!;
    const by = seen.hits.get(leaf.id) ?? [];
    const familyDef = taxonomy.families.find((f) => f.id === family);
    const applicable =
      by.length > 0 ||
      seen.untested.has(leaf.id) ||
      (!seen.notApplicable.has(leaf.id) && !(familyDef?.needsAgents && !agents));
    return {
      id: leaf.id,
      family,
      exercised: by.length > 0,
      applicable,
      failed: by.some((b) => b.status === 'failed'),
      by,
    };
  });
  const families: FamilyCoverage[] = taxonomy.families.map((family) => {
    const mine = leaves.filter((leaf) => leaf.family === family.id && leaf.applicable);
    const exercised = mine.filter((leaf) => leaf.exercised).length;
    const status: FamilyStatus =
      mine.length === 0 ? 'n/a' : exercised === mine.length ? 'covered' : exercised > 0 ? 'partial' : 'uncovered';
    return {
      id: family.id,
      name: family.name,
      status,
      exercised,
      applicable: mine.length,
      failed: mine.filter((leaf) => leaf.failed).length,
    };
  });
  const applicable = leaves.filter((leaf) => leaf.applicable).length;
  const exercised = leaves.filter((leaf) => leaf.applicable && leaf.exercised).length;
  return {
    ...head,
    taxonomyVersion: taxonomy.version,
    families,
    leaves,
    percent: applicable === 0 ? 0 : Math.round((exercised / applicable) * 1000) / 10,
    exercised,
    applicable,
    failed: leaves.filter((leaf) => leaf.failed).length,
    familiesCovered: families.filter((f) => f.status === 'covered').length,
    familiesApplicable: families.filter((f) => f.status !== 'n/a').length,
  };
}

/**
 * The leaves an injected fault exercises, by the record's kind (a scenario's faults are network
 * faults). An experiment breaks several planes: its tool-call-plane faults say so
 * (`toolcall:schema_drift`), the rest are the proxy's faults.
 */
function injectedLeaves(taxonomy: Taxonomy, kind: RunKind | undefined, fault: string): readonly string[] {
  if (kind === 'experiment') {
    const plane = fault.startsWith('toolcall:') ? 'toolcall' : 'network';
    return taxonomy.injections[plane]?.[fault.replace(/^toolcall:/, '')] ?? [];
  }
  return taxonomy.injections[kind === 'scenario' ? 'network' : (kind ?? '')]?.[fault] ?? [];
}

export const COVERAGE_FORMATS = ['text', 'json', 'md', 'junit', 'sarif'] as const;
export type CoverageFormat = (typeof COVERAGE_FORMATS)[number];

const xml = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Whether the report meets `threshold` (percent of applicable leaves exercised); undefined without one. */
export function thresholdMet(report: CoverageReport, threshold: number | undefined): boolean | undefined {
  return threshold === undefined ? undefined : report.percent >= threshold;
}

export function renderCoverage(report: CoverageReport, format: CoverageFormat, threshold?: number): string {
  switch (format) {
    case 'json':
      return (
        JSON.stringify(
          { ...report, ...(threshold !== undefined ? { threshold, met: thresholdMet(report, threshold) } : {}) },
          null,
          2,
        ) + '\n'
      );
    case 'md':
      return renderMarkdown(report, threshold);
    case 'junit':
      return renderJunit(report);
    case 'sarif':
      return renderSarif(report);
    default:
      return renderText(report, threshold);
  }
}

/** What was scored: the suite, or the probes named without one. */
function subject(report: CoverageReport): string {
  if (report.suite) return ` of ${report.suite}`;
  if (report.probes) return ` of probe${report.probes.length === 1 ? '' : 's'} ${report.probes.join(', ') || '(none)'}`;
  return '';
}

function headline(report: CoverageReport, threshold: number | undefined): string {
  const met = thresholdMet(report, threshold);
  const gate = met === undefined ? '' : ` (threshold ${threshold}%: ${met ? 'met' : 'NOT met'})`;
  // Probes scored without a suite ran nothing: there is no outcome to count.
  const failed = report.probes ? '' : `, ${report.failed} of them failed`;
  return (
    `${report.percent}% of applicable faults exercised ` +
    `(${report.exercised}/${report.applicable})${failed}${gate}; ` +
    `taxonomy ${report.taxonomyVersion}`
  );
}

function familiesLine(report: CoverageReport): string {
  const na = report.families.length - report.familiesApplicable;
  const failed = report.probes ? '' : `; ${report.failed} exercised fault${report.failed === 1 ? '' : 's'} failed`;
  return (
    `${report.familiesCovered} of ${report.familiesApplicable} ` +
    `families fully covered${na ? ` (${na} n/a)` : ''}${failed}`
  );
}

/** The leaves a run found failing, each with the runs that say so. */
function failedLeaves(report: CoverageReport): Array<{ leaf: LeafCoverage; runs: string[] }> {
  return report.leaves
    .filter((leaf) => leaf.failed)
    .map((leaf) => ({ leaf, runs: leaf.by.filter((b) => b.status === 'failed').map((b) => b.run) }));
}

/**
 * mcptest's shape for the family lines (`partial  Protocol interaction  2/3 faults [PROTO]`) and
 * the summary ("N of M families fully covered"), plus what a family line alone cannot say: which
 * exercised leaves failed (a family can be covered and failing), and which leaves no run exercised.
 */
function renderText(report: CoverageReport, threshold: number | undefined): string {
  const out = [`fault coverage${subject(report)}: ${headline(report, threshold)}`];
  for (const r of report.runs) out.push(`  run ${r.name} (${r.kind}): ${r.ran ? 'ran' : r.problem}`);
  out.push('');
  for (const f of report.families) {
    const failing = report.leaves.filter((l) => l.family === f.id && l.failed).map((l) => l.id);
    out.push(
      `${f.status}  ${f.name}  ${f.exercised}/${f.applicable} faults ` +
        `[${f.id}]${failing.length ? `  ${failing.length} failing: ${failing.join(', ')}` : ''}`,
    );
  }
  out.push('', familiesLine(report));
  const failed = failedLeaves(report);
  if (failed.length > 0) {
    out.push('', 'failed:');
    for (const { leaf, runs } of failed) out.push(`  ${leaf.id} — failed in ${runs.join(', ')}`);
  }
  const missing = report.leaves.filter((l) => l.applicable && !l.exercised);
  if (missing.length > 0) {
    out.push('', 'not exercised:');
    for (const leaf of missing) out.push(`  ${leaf.id}`);
  }
  return out.join('\n') + '\n';
}

function renderMarkdown(report: CoverageReport, threshold: number | undefined): string {
  const out = [
    `# Fault coverage${subject(report).replace(/^ of /, ' — ')}`,
    '',
    `**${report.percent}%** — ${headline(report, threshold)}.`,
    '',
    familiesLine(report) + '.',
    '',
  ];
  out.push('| Family | Status | Faults exercised | Failing |', '|---|---|---|---|');
  for (const f of report.families)
    out.push(`| ${f.name} [${f.id}] | ${f.status} | ${f.exercised}/${f.applicable} | ${f.failed} |`);
  out.push('', '| Leaf | Exercised by |', '|---|---|');
  for (const l of report.leaves)
    out.push(
      `| ${l.id} | ${!l.applicable ? 'n/a' : l.by.length ? l.by.map((b) => `${b.run} (${b.status})`).join(', ') : '—'} ` +
        `|`,
    );
  const missing = report.runs.filter((r) => !r.ran);
  if (missing.length) out.push('', ...missing.map((r) => `- run **${r.name}**: ${r.problem ?? 'did not run'}`));
  return out.join('\n') + '\n';
}

/** One test case per family: a failure when not fully covered, with the leaves no run exercised. */
function renderJunit(report: CoverageReport): string {
  const cases = report.families.map((f) => {
    const name = `classname="fault-coverage" name="${f.id}"`;
    if (f.status === 'n/a') return `    <testcase ${name}><skipped message="n/a"/></testcase>`;
    if (f.status === 'covered') return `    <testcase ${name}/>`;
    const missing = report.leaves.filter((l) => l.family === f.id && l.applicable && !l.exercised).map((l) => l.id);
    return (
      `    <testcase ${name}><failure message="${f.status}: ` +
      `${f.exercised}/${f.applicable} leaves ` +
      `exercised">${xml(missing.join(', '))}</failure></testcase>`
    );
  });
  const failures = report.families.filter((f) => f.status === 'partial' || f.status === 'uncovered').length;
  const skipped = report.families.filter((f) => f.status === 'n/a').length;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  ` +
    `<testsuite name="fault-coverage" ` +
    `tests="${report.families.length}" failures="${failures}" ` +
    `skipped="${skipped}">\n${cases.join('\n')}\n  ` +
    `</testsuite>\n</testsuites>\n`
  );
}

/** SARIF 2.1.0: a failed leaf is an error, a leaf no run exercised a note. */
function renderSarif(report: CoverageReport): string {
  const failed = failedLeaves(report).map(({ leaf, runs }) => ({
    ruleId: leaf.id,
    level: 'error',
    message: { text: `${leaf.id} (${leaf.family}) failed in ${runs.join(', ')}` },
  }));
  const missing = report.leaves
    .filter((l) => l.applicable && !l.exercised)
    .map((l) => ({
      ruleId: l.id,
      level: 'note',
      message: { text: `${l.id} (${l.family}) is not exercised by any run of the suite` },
    }));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'faultline-coverage',
            version: report.taxonomyVersion,
            rules: report.leaves.map((l) => ({ id: l.id })),
          },
        },
        results: [...failed, ...missing],
      },
    ],
  };
  return JSON.stringify(sarif, null, 2) + '\n';
}

/** The taxonomy itself as text (`coverage --no-suite`). */
export function renderTaxonomy(taxonomy: Taxonomy): string {
  const out = [
    `fault taxonomy ${taxonomy.version}: ${taxonomy.families.length} families, ${taxonomy.leaves.length} leaves`,
  ];
  for (const f of taxonomy.families) {
    out.push('', `${f.id} — ${f.name}: ${f.description}`);
    for (const l of taxonomy.leaves.filter((x) => familyOf(x.id) === f.id))
      out.push(`  ${l.id}: ${l.description} (probes: ${l.probes.join(', ')})`);
  }
  const aliases = Object.entries(taxonomy.probeAliases ?? {});
  if (aliases.length > 0) {
    out.push('', 'probe aliases (coverage --no-suite --probe NAME):');
    for (const [alias, probes] of aliases) out.push(`  ${alias}: ${probes.join(', ')}`);
  }
  for (const [kind, faults] of Object.entries(taxonomy.injections)) {
    out.push('', `${kind} faults → leaves:`);
    for (const [fault, ids] of Object.entries(faults)) out.push(`  ${fault}: ${ids.join(', ')}`);
  }
  return out.join('\n') + '\n';
}
