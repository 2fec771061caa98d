/**
 * The probe report as text: the verdict and counts, then the failures (each with the exchange
 * that shows it), then the warnings, then every leaf by family.
 */
import type { Finding } from './findings.js';
import { probeVerdict, type ProbeReport } from './report.js';

const MARK: Record<string, string> = {
  passed: 'PASS',
  failed: 'FAIL',
  warning: 'WARN',
  'n/a': 'n/a ',
  inconclusive: '??? ',
  untested: 'SKIP',
};
/** Tools named in a grouped finding's line before "…". */
const TOOLS_SHOWN = 8;
const LINE_CHARS = 400;

function findingLines(finding: Finding, verbose: boolean): string[] {
  const tools = finding.tools ?? (finding.tool ? [finding.tool] : []);
  const where =
    tools.length === 0
      ? ''
      : ` [${tools.length > 1 ? `${tools.length} tools: ` : ''}${tools.slice(0, TOOLS_SHOWN).join(', ')}${tools.length > TOOLS_SHOWN ? ', …' : ''}]`;
  const times = finding.occurrences > Math.max(1, tools.length) ? ` (${finding.occurrences} times)` : '';
  const out = [`- ${finding.leaf}${where}: ${finding.message}${times}`];
  if (verbose)
    for (const line of finding.exchange)
      out.push(`    ${line.dir} ${line.text.length > LINE_CHARS ? `${line.text.slice(0, LINE_CHARS)}…` : line.text}`);
  return out;
}

export function renderProbeText(report: ProbeReport, verbose = true): string {
  const out: string[] = [];
  const s = report.summary;
  const verdict = probeVerdict(report).toUpperCase();
  out.push(
    `${verdict} probe of ${report.target} (${report.transport}) in ${(report.durationMs / 1000).toFixed(1)} ` +
      `s — taxonomy ${report.taxonomyVersion ?? '?'}`,
  );
  if (report.server)
    out.push(
      `server: ${report.server.name ?? '?'} ` +
        `${report.server.version ?? ''}, protocol ${report.server.protocolVersion ?? '?'}`,
    );
  if (report.error) out.push(`error: ${report.error}`);
  out.push(
    `leaves: ${s.failed} failed, ${s.warning} with warnings, ${s.passed} ` +
      `passed, ${s.inconclusive} inconclusive, ${s.untested} untested, ${s.notApplicable} ` +
      `n/a; ${s.failures} failure(s), ${s.warnings} warning(s)`,
  );
  const skipped = report.tools.skipped;
  out.push(
    `tools: ${report.tools.listed} listed, ${report.tools.called.length} ` +
      `called${skipped.length ? `, ${skipped.length} skipped (not readOnlyHint; --allow-writes calls them): ${skipped.slice(0, 8).join(', ')}${skipped.length > 8 ? ', …' : ''}` : ''}`,
  );
  const findings = report.leaves.flatMap((leaf) => leaf.findings);
  for (const [title, severity] of [
    ['Failures', 'failure'],
    ['Warnings', 'warning'],
  ] as const) {
    const mine = findings.filter((f) => f.severity === severity);
    if (mine.length === 0) continue;
    out.push('', `${title}:`);
    for (const finding of mine) out.push(...findingLines(finding, verbose));
  }
  let family = '';
  for (const leaf of report.leaves) {
    if (leaf.family !== family) {
      family = leaf.family;
      out.push('', family);
    }
    out.push(
      `  ${MARK[leaf.status]} ${leaf.id}${leaf.checks ? ` (${leaf.checks} check${leaf.checks === 1 ? '' : 's'})` : ''}${leaf.note ? ` — ${leaf.note}` : ''}`,
    );
  }
  return out.join('\n') + '\n';
}
