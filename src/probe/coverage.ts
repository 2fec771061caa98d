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
 * A leaf is exercised when a record says it passed, failed or was inconclusive (a probe ran for
 * it), or when an injection run injected a fault the taxonomy maps to it. A leaf every record
 * calls n/a (an HTTP check on a stdio server) leaves the denominator; one a record calls untested
 * (it applies, but that run could not exercise it) stays in it, not exercised. Per family: covered (every
 * applicable leaf exercised), partial, uncovered, n/a (no applicable leaf; PROVIDER without
 * agents unless a run exercised it).
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ToolInputError, messageOf } from '../errors.js';
import { unknownKeysProblem } from '../config-reader.js';
import { recordProblems, RUN_KINDS, runKindOf, type RunKind, type RunRecord } from './record.js';
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
  /** The runs that exercised it, with the outcome when a probe reported one. */
  by: Array<{ run: string; status: string }>;
}

export interface FamilyCoverage {
  id: FamilyId;
  name: string;
  status: FamilyStatus;
  exercised: number;
  applicable: number;
}

export interface CoverageReport {
  suite?: string;
  taxonomyVersion: string;
  runs: Array<{ name: string; kind: RunKind; record: string; ran: boolean; problem?: string }>;
  families: FamilyCoverage[];
  leaves: LeafCoverage[];
  /** Exercised applicable leaves / applicable leaves, 0-100 (one decimal). */
  percent: number;
  exercised: number;
  applicable: number;
}

export async function loadSuite(file: string): Promise<Suite> {
  const { parse } = await import('yaml');
  let data: unknown;
  try {
    data = parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ToolInputError(`suite ${file}: ${messageOf(error)}`);
  }
  const s = data as { version?: unknown; name?: unknown; agents?: unknown; runs?: unknown } | null;
  const problems: string[] = [];
  if (!s || typeof s !== 'object') throw new ToolInputError(`suite ${file}: expected a YAML mapping with version and runs`);
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
  if (problems.length > 0) throw new ToolInputError(`suite ${file}: ${problems.join('; ')}`);
  return { version: 1, name: typeof s.name === 'string' ? s.name : undefined, agents: s.agents === true, runs, baseDir: dirname(resolve(file)) };
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
export async function computeCoverage(suite: Suite, taxonomy: Taxonomy, only: string[] = [], suiteName?: string): Promise<CoverageReport> {
  const unknown = only.filter((name) => !suite.runs.some((run) => run.name === name));
  if (unknown.length > 0) throw new ToolInputError(`--probe: no run named ${unknown.join(', ')} in the suite (it has: ${suite.runs.map((r) => r.name).join(', ') || 'none'})`);
  const runs = only.length > 0 ? suite.runs.filter((run) => only.includes(run.name)) : suite.runs;
  const hits = new Map<string, Array<{ run: string; status: string }>>();
  const seenNa = new Set<string>();
  const seenUntested = new Set<string>();
  const reportRuns: CoverageReport['runs'] = [];
  for (const run of runs) {
    const { record, problem } = await readRecord(resolve(suite.baseDir, run.record));
    reportRuns.push({ name: run.name, kind: run.kind, record: run.record, ran: record !== undefined, ...(problem ? { problem } : {}) });
    if (!record) continue;
    for (const leaf of record.leaves ?? []) {
      if (leaf.status === 'n/a') seenNa.add(leaf.id);
      else if (leaf.status === 'untested') seenUntested.add(leaf.id);
      else hits.set(leaf.id, [...(hits.get(leaf.id) ?? []), { run: run.name, status: leaf.status }]);
    }
    const recordKind = runKindOf(record.kind);
    for (const fault of record.injected ?? []) {
      for (const id of injectedLeaves(taxonomy, recordKind, fault)) hits.set(id, [...(hits.get(id) ?? []), { run: run.name, status: `injected ${fault}` }]);
    }
  }
  const leaves: LeafCoverage[] = taxonomy.leaves.map((leaf) => {
    const family = familyOf(leaf.id)!;
    const by = hits.get(leaf.id) ?? [];
    const familyDef = taxonomy.families.find((f) => f.id === family);
    const applicable = by.length > 0 || seenUntested.has(leaf.id) || (!seenNa.has(leaf.id) && !(familyDef?.needsAgents && !suite.agents));
    return { id: leaf.id, family, exercised: by.length > 0, applicable, by };
  });
  const families: FamilyCoverage[] = taxonomy.families.map((family) => {
    const mine = leaves.filter((leaf) => leaf.family === family.id && leaf.applicable);
    const exercised = mine.filter((leaf) => leaf.exercised).length;
    const status: FamilyStatus = mine.length === 0 ? 'n/a' : exercised === mine.length ? 'covered' : exercised > 0 ? 'partial' : 'uncovered';
    return { id: family.id, name: family.name, status, exercised, applicable: mine.length };
  });
  const applicable = leaves.filter((leaf) => leaf.applicable).length;
  const exercised = leaves.filter((leaf) => leaf.applicable && leaf.exercised).length;
  return {
    ...(suiteName ? { suite: suiteName } : {}),
    taxonomyVersion: taxonomy.version,
    runs: reportRuns,
    families,
    leaves,
    percent: applicable === 0 ? 0 : Math.round((exercised / applicable) * 1000) / 10,
    exercised,
    applicable,
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

export function renderCoverage(report: CoverageReport, format: CoverageFormat, threshold?: number): string {
  const verdict = threshold === undefined ? '' : report.percent >= threshold ? ` (threshold ${threshold}%: met)` : ` (threshold ${threshold}%: NOT met)`;
  switch (format) {
    case 'json':
      return JSON.stringify({ ...report, ...(threshold !== undefined ? { threshold, met: report.percent >= threshold } : {}) }, null, 2) + '\n';
    case 'md': {
      const out = [`# Fault coverage${report.suite ? ` — ${report.suite}` : ''}`, '', `**${report.percent}%** of applicable leaves exercised (${report.exercised}/${report.applicable})${verdict}; taxonomy ${report.taxonomyVersion}.`, '', '| Family | Status | Leaves exercised |', '|---|---|---|'];
      for (const f of report.families) out.push(`| ${f.id} (${f.name}) | ${f.status} | ${f.exercised}/${f.applicable} |`);
      out.push('', '| Leaf | Exercised by |', '|---|---|');
      for (const l of report.leaves) out.push(`| ${l.id} | ${!l.applicable ? 'n/a' : l.by.length ? l.by.map((b) => `${b.run} (${b.status})`).join(', ') : '—'} |`);
      const missing = report.runs.filter((r) => !r.ran);
      if (missing.length) out.push('', ...missing.map((r) => `- run **${r.name}**: ${r.problem ?? 'did not run'}`));
      return out.join('\n') + '\n';
    }
    case 'junit': {
      const cases = report.families.map((f) =>
        f.status === 'n/a'
          ? `    <testcase classname="fault-coverage" name="${f.id}"><skipped message="n/a"/></testcase>`
          : f.status === 'covered'
            ? `    <testcase classname="fault-coverage" name="${f.id}"/>`
            : `    <testcase classname="fault-coverage" name="${f.id}"><failure message="${f.status}: ${f.exercised}/${f.applicable} leaves exercised">${xml(report.leaves.filter((l) => l.family === f.id && l.applicable && !l.exercised).map((l) => l.id).join(', '))}</failure></testcase>`,
      );
      const failures = report.families.filter((f) => f.status === 'partial' || f.status === 'uncovered').length;
      const skipped = report.families.filter((f) => f.status === 'n/a').length;
      return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  <testsuite name="fault-coverage" tests="${report.families.length}" failures="${failures}" skipped="${skipped}">\n${cases.join('\n')}\n  </testsuite>\n</testsuites>\n`;
    }
    case 'sarif': {
      const results = report.leaves
        .filter((l) => l.applicable && !l.exercised)
        .map((l) => ({ ruleId: l.id, level: 'note', message: { text: `${l.id} (${l.family}) is not exercised by any run of the suite` } }));
      return (
        JSON.stringify(
          {
            $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
            version: '2.1.0',
            runs: [{ tool: { driver: { name: 'faultline-coverage', version: report.taxonomyVersion, rules: report.leaves.map((l) => ({ id: l.id })) } }, results }],
          },
          null,
          2,
        ) + '\n'
      );
    }
    default: {
      const out = [`fault coverage${report.suite ? ` of ${report.suite}` : ''}: ${report.percent}% (${report.exercised}/${report.applicable} applicable leaves)${verdict}; taxonomy ${report.taxonomyVersion}`];
      for (const r of report.runs) out.push(`  run ${r.name} (${r.kind}): ${r.ran ? 'ran' : r.problem}`);
      for (const f of report.families) {
        out.push(`${f.id.padEnd(9)} ${f.status.padEnd(9)} ${f.exercised}/${f.applicable}`);
        for (const l of report.leaves.filter((x) => x.family === f.id)) out.push(`  ${!l.applicable ? 'n/a ' : l.exercised ? 'yes ' : 'no  '} ${l.id}`);
      }
      return out.join('\n') + '\n';
    }
  }
}

/** The taxonomy itself as text (`coverage --no-suite`). */
export function renderTaxonomy(taxonomy: Taxonomy): string {
  const out = [`fault taxonomy ${taxonomy.version}: ${taxonomy.families.length} families, ${taxonomy.leaves.length} leaves`];
  for (const f of taxonomy.families) {
    out.push('', `${f.id} — ${f.name}: ${f.description}`);
    for (const l of taxonomy.leaves.filter((x) => familyOf(x.id) === f.id)) out.push(`  ${l.id}: ${l.description} (probes: ${l.probes.join(', ')})`);
  }
  for (const [kind, faults] of Object.entries(taxonomy.injections)) {
    out.push('', `${kind} faults → leaves:`);
    for (const [fault, ids] of Object.entries(faults)) out.push(`  ${fault}: ${ids.join(', ')}`);
  }
  return out.join('\n') + '\n';
}
