/**
 * Findings and the ledger that turns them into one result per leaf.
 *
 * Every finding has a severity: a failure (a MUST of the MCP or JSON-RPC specification broken, a
 * crash, a hang, a security check failed) or a warning (a SHOULD, or a portability risk with some
 * model providers). A leaf with a failure fails; one with warnings only is `warning`; the run's
 * exit code and coverage's failed leaves follow failures alone.
 *
 * Findings of one kind are grouped: a finding with a `group` key joins an earlier one of the same
 * leaf and key, adding its tool to the list and counting one more occurrence, so that `$schema`
 * in 22 tools' input schemas is one finding naming 22 tools, not 22 findings.
 */
import type { TranscriptLine } from './peer/index.js';
import { familyOf, type FamilyId, type Taxonomy } from './taxonomy.js';
import type { LeafStatus } from '../kernel/run-record.js';

export type Severity = 'failure' | 'warning';

export interface Finding {
  leaf: string;
  severity: Severity;
  /** The probe (check) that found it, as taxonomy.json names it. */
  probe: string;
  /** The first tool it was seen on (when it concerns tools). */
  tool?: string;
  /** Every tool a grouped finding was seen on. */
  tools?: string[];
  /** How many times it was seen (grouped findings count each). */
  occurrences: number;
  message: string;
  /** The exact JSON-RPC lines ('>' sent, '<' received, '!' observed) of the first occurrence. */
  exchange: TranscriptLine[];
}

/** What a check reports: a finding before the ledger fills in its count and severity default. */
export interface FindingInput {
  leaf: string;
  probe: string;
  /** Default: the severity the check declared for the leaf. */
  severity?: Severity;
  tool?: string;
  message: string;
  exchange: TranscriptLine[];
  /** Findings of one leaf with the same group key are one finding listing their tools. */
  group?: string;
}

export interface LeafResult {
  id: string;
  family: FamilyId;
  status: LeafStatus;
  /** How many checks of this leaf ran. */
  checks: number;
  note?: string;
  findings: Finding[];
}

/** Lines of an exchange kept per finding (the last ones: where it went wrong). */
const EXCHANGE_LINES = 12;
/** Distinct findings kept per leaf (grouped findings count once); the rest are counted in the last note. */
const FINDINGS_PER_LEAF = 20;
/** Tools listed per grouped finding. */
const TOOLS_LISTED = 50;

export class Ledger {
  private readonly results = new Map<string, LeafResult & { groups: Map<string, Finding>; dropped: number }>();
  private readonly probesByLeaf = new Map<string, readonly string[]>();

  constructor(
    taxonomy: Taxonomy,
    selected: (family: FamilyId) => boolean,
    private readonly severityOf: (leaf: string) => Severity,
  ) {
    for (const leaf of taxonomy.leaves) {
      this.probesByLeaf.set(leaf.id, leaf.probes);
      const family = familyOf(leaf.id)!;
      if (selected(family))
        this.results.set(leaf.id, {
          id: leaf.id,
          family,
          status: 'n/a',
          checks: 0,
          findings: [],
          groups: new Map(),
          dropped: 0,
        });
    }
  }

  wants(leaf: string): boolean {
    return this.results.has(leaf);
  }

  check(leaf: string, n = 1): void {
    const r = this.results.get(leaf);
    if (r) r.checks += n;
  }

  report(input: FindingInput): void {
    const r = this.results.get(input.leaf);
    if (!r) return;
    r.checks += 1;
    const severity = input.severity ?? this.severityOf(input.leaf);
    // A group never mixes severities: a failure of a kind is not hidden in a warning's count.
    const key = input.group === undefined ? undefined : `${severity}:${input.group}`;
    const earlier = key === undefined ? undefined : r.groups.get(key);
    if (earlier) {
      earlier.occurrences += 1;
      if (input.tool !== undefined && !earlier.tools!.includes(input.tool) && earlier.tools!.length < TOOLS_LISTED)
        earlier.tools!.push(input.tool);
      return;
    }
    if (r.findings.length >= FINDINGS_PER_LEAF) {
      r.dropped += 1;
      return;
    }
    const finding: Finding = {
      leaf: input.leaf,
      severity,
      probe: input.probe,
      ...(input.tool !== undefined ? { tool: input.tool } : {}),
      ...(key !== undefined ? { tools: input.tool !== undefined ? [input.tool] : [] } : {}),
      occurrences: 1,
      message: input.message,
      // Which request a line belongs to chose the lines; the record keeps what was said.
      exchange: input.exchange.slice(-EXCHANGE_LINES).map(({ dir, text }) => ({ dir, text })),
    };
    r.findings.push(finding);
    if (key !== undefined) r.groups.set(key, finding);
  }

  /**
   * Nothing could be tested (no initialize): what was seen before says nothing either (a server
   * that exits before it can be initialised did not exit because of the early request). Every
   * selected leaf is untested, with why: coverage must not count such a run as covering nothing
   * applicable.
   */
  untested(why: string): void {
    for (const r of this.results.values()) {
      r.checks = 0;
      r.findings = [];
      r.groups.clear();
      r.status = 'untested';
      r.note = why;
    }
  }

  /**
   * The server is gone for good (an HTTP server stopped answering: the probe did not start it and
   * cannot start it again), or the run's bound came. What was decided stays; every leaf not
   * exercised yet is untested, with why — rather than failed by checks that could only meet a
   * dead server.
   */
  untestedFromNow(why: string, notApplicable: ReadonlySet<string>): void {
    for (const r of this.results.values()) {
      if (r.checks > 0 || r.findings.length > 0 || r.status === 'inconclusive' || notApplicable.has(r.id)) continue;
      r.status = 'untested';
      r.note = r.note ? `${r.note}; ${why}` : why;
    }
  }

  /**
   * Adds a note to a leaf. `inconclusive`: what was seen shows neither a pass nor a fault.
   * `untested`: the leaf applies to this server but this run could not exercise it (the note says
   * why); unless a check ran after all, it stays in coverage's denominator as not exercised,
   * where n/a (the leaf does not apply here) leaves it.
   */
  note(leaf: string, note: string, outcome?: 'inconclusive' | 'untested'): void {
    const r = this.results.get(leaf);
    if (!r) return;
    if (r.note?.split('; ').includes(note)) return;
    r.note = r.note ? `${r.note}; ${note}` : note;
    if (outcome === 'inconclusive' || (outcome === 'untested' && r.status !== 'inconclusive')) r.status = outcome;
  }

  /** The leaves exercised only by these probes, for a note on each (see note). */
  leavesOnlyProbedBy(probes: ReadonlySet<string>): string[] {
    return [...this.results.keys()].filter((id) => {
      const own = this.probesByLeaf.get(id) ?? [];
      return own.length > 0 && own.every((probe) => probes.has(probe));
    });
  }

  finish(): LeafResult[] {
    return [...this.results.values()].map(({ groups: _groups, dropped, ...r }) => {
      const failed = r.findings.some((f) => f.severity === 'failure');
      const status: LeafStatus = failed
        ? 'failed'
        : r.findings.length > 0
          ? 'warning'
          : r.status === 'inconclusive'
            ? 'inconclusive'
            : r.checks > 0
              ? 'passed'
              : r.status === 'untested'
                ? 'untested'
                : 'n/a';
      const more = dropped > 0 ? `${dropped} more finding(s) not listed` : undefined;
      return { ...r, status, ...(more ? { note: r.note ? `${r.note}; ${more}` : more } : {}) };
    });
  }
}
