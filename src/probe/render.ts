/** The probe report as text: a verdict line, then per family each leaf with its status, then every failure with its exchange. */
import { probeVerdict, type ProbeReport } from './runner.js';

const MARK: Record<string, string> = { passed: 'PASS', failed: 'FAIL', 'n/a': 'n/a ', inconclusive: '??? ', untested: 'SKIP' };

export function renderProbeText(report: ProbeReport, verbose = true): string {
  const out: string[] = [];
  const s = report.summary;
  const verdict = probeVerdict(report).toUpperCase();
  out.push(`${verdict} probe of ${report.target} (${report.transport}) in ${(report.durationMs / 1000).toFixed(1)} s — taxonomy ${report.taxonomyVersion ?? '?'}`);
  if (report.server) out.push(`server: ${report.server.name ?? '?'} ${report.server.version ?? ''}, protocol ${report.server.protocolVersion ?? '?'}`);
  if (report.error) out.push(`error: ${report.error}`);
  out.push(`leaves: ${s.passed} passed, ${s.failed} failed, ${s.inconclusive} inconclusive, ${s.untested} untested, ${s.notApplicable} n/a; ${s.findings} finding(s)`);
  out.push(`tools: ${report.tools.listed} listed, ${report.tools.called.length} called${report.tools.skipped.length ? `, ${report.tools.skipped.length} skipped (not readOnlyHint; --allow-writes calls them): ${report.tools.skipped.slice(0, 8).join(', ')}${report.tools.skipped.length > 8 ? ', …' : ''}` : ''}`);
  let family = '';
  for (const leaf of report.leaves) {
    if (leaf.family !== family) {
      family = leaf.family;
      out.push('', family);
    }
    out.push(`  ${MARK[leaf.status]} ${leaf.id}${leaf.checks ? ` (${leaf.checks} check${leaf.checks === 1 ? '' : 's'})` : ''}${leaf.note ? ` — ${leaf.note}` : ''}`);
  }
  const failures = report.leaves.flatMap((leaf) => leaf.findings);
  if (failures.length > 0 && verbose) {
    out.push('', 'Findings:');
    for (const f of failures) {
      out.push(`- ${f.leaf}${f.tool ? ` [${f.tool}]` : ''}: ${f.message}`);
      for (const line of f.exchange) out.push(`    ${line.dir} ${line.text.length > 400 ? `${line.text.slice(0, 400)}…` : line.text}`);
    }
  }
  return out.join('\n') + '\n';
}
