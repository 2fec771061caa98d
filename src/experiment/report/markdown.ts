/**
 * The experiment's markdown report: the verdict and why first, then each expectation with its
 * figure and moment, the timeline of what was switched and whether it acted, the load's figures,
 * the plane steps and the commands.
 */
import { formatDuration } from '../../duration.js';
import type { ExperimentResult, ExpectationStatus } from '../result.js';

const MARK: Record<ExpectationStatus, string> = {
  passed: '✅ passed',
  failed: '❌ failed',
  inconclusive: '⚠️ inconclusive',
  not_checked: '➖ not checked',
};

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const ms = (value: number | null | undefined): string =>
  value === null || value === undefined ? '—' : formatDuration(value);
const num = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined ? '—' : value.toFixed(digits);

export function renderMarkdown(result: ExperimentResult): string {
  const out: string[] = [];
  out.push(`# Experiment: ${result.title}`, '');
  if (result.description) out.push(result.description.trim(), '');
  out.push(
    `**Verdict: ${result.verdict.toUpperCase()}**${result.aborted ? ` (aborted at ${ms(result.aborted.atMs)})` : ''}` +
      ((result.unreachable ?? []).length > 0
        ? ` — unreachable in the baseline: ${result.unreachable.map((down) => down.where).join(', ')}`
        : ''),
    '',
  );
  for (const reason of result.verdictReasons) out.push(`- ${reason}`);
  out.push(
    '',
    '## Expectations',
    '',
    '| Result | Expectation | Window | Figure | When | Why |',
    '|---|---|---|---|---|---|',
  );
  for (const e of result.expectations) {
    const window = e.window ? `${cell(e.window.label)} ${ms(e.window.fromMs)}–${ms(e.window.toMs)}` : '—';
    out.push(
      `| ${MARK[e.status]} | ${cell(e.title)} | ${window} | ${cell(e.figure || '—')} ` +
        `| ${ms(e.atMs)} | ${cell(e.reason)} |`,
    );
  }
  const { baseline, inject, recover } = result.phases;
  // Nothing injected (phasesOf): the whole run is the baseline, and inject and recover are empty at its end.
  const nothingInjected =
    inject.fromMs === inject.toMs && baseline.toMs === inject.fromMs && recover.fromMs === recover.toMs;
  out.push(
    '',
    '## Timeline',
    '',
    nothingInjected
      ? `Baseline ${ms(baseline.fromMs)}–${ms(baseline.toMs)}: the whole run (no fault or tool-call step).`
      : `Baseline ${ms(baseline.fromMs)}–${ms(baseline.toMs)}, inject ` +
          `${ms(inject.fromMs)}–${ms(inject.toMs)}, recover ` +
          `${ms(recover.fromMs)}–${ms(recover.toMs)}.`,
    '',
  );
  if (result.faults.length > 0) {
    out.push('| Fault step | Fault | Where | Planned | On | Off | Acted |', '|---|---|---|---|---|---|---|');
    for (const f of result.faults)
      out.push(
        `| ${cell(f.name)} | ${cell(f.type)} | ${cell(f.where)} | ` +
          `${ms(f.plannedFromMs)}–${ms(f.plannedToMs)} | ${ms(f.onAtMs)} | ${ms(f.offAtMs)} ` +
          `| ${f.acted === null ? '?' : f.acted ? 'yes' : 'no'}: ${cell(f.actedDetail)} ` +
          `|`,
      );
    out.push('');
  }
  if (result.load) {
    const load = result.load;
    const latency = load.latency;
    out.push('## Load', '');
    out.push(
      `${load.method} ${load.url}: ${num(load.ratePerSecond)} ` +
        `requests/s asked, ${num(load.achievedRatePerSecond)} achieved, ` +
        `for ${ms(load.durationMs)} (timeout ${ms(load.timeoutMs)}).`,
      '',
    );
    out.push('| Requests | Errors | p50 (ms) | p95 (ms) | p99 (ms) | Max (ms) |', '|---|---|---|---|---|---|');
    out.push(
      `| ${load.requests} | ${load.errors} ` +
        `(${num(load.requests ? (load.errors / load.requests) * 100 : 0)}%) ` +
        `| ${num(latency?.p50, 2)} | ${num(latency?.p95, 2)} | ${num(latency?.p99, 2)} ` +
        `| ${num(latency?.max, 2)} |`,
    );
    const classes = Object.entries(load.errorsByClass).filter(([, count]) => count > 0);
    if (classes.length > 0)
      out.push(
        '',
        `Errors by class: ${classes.map(([name, count]) => `${name} ${count}`).join(', ')}. ${Object.entries(
          load.errorDetails,
        )
          .slice(0, 8)
          .map(([detail, count]) => `${detail} × ${count}`)
          .join(', ')}`,
      );
    out.push('');
    const buckets = result.seconds.filter((bucket) => bucket.requests > 0);
    if (buckets.length > 120)
      out.push(`${buckets.length} seconds: the per-second figures are in the HTML report and the run record.`, '');
    else if (buckets.length > 0) {
      out.push(
        'Per second of the run (requests by their intended start):',
        '',
        `| Second | Requests | Errors % | p50 (ms) | p95 (ms) | p99 (ms) | Faults on |`,
        '|---|---|---|---|---|---|---|',
      );
      for (const bucket of buckets) {
        const on = result.faults
          .filter((f) => f.onAtMs !== null && f.onAtMs < bucket.toMs && (f.offAtMs ?? Infinity) > bucket.fromMs)
          .map((f) => f.name);
        out.push(
          `| ${ms(bucket.fromMs)} | ${bucket.requests} | ${num(bucket.errorPercent)} ` +
            `| ${num(bucket.p50Ms, 2)} | ${num(bucket.p95Ms, 2)} | ${num(bucket.p99Ms, 2)} ` +
            `| ${cell(on.join(', ') || '—')} |`,
        );
      }
      out.push('');
    }
  }
  for (const step of result.steps) {
    out.push(
      `## ${step.kind === 'toolcall' ? 'Tool calls' : 'Probe'}: ${step.name}`,
      '',
      `Ran ${ms(step.startedAtMs)}–${ms(step.endedAtMs)}.${step.error ? ` ${step.error}.` : ''}`,
      '',
    );
    if (step.slis) {
      const s = step.slis;
      out.push(
        `TCSR ${num(s.tcsr, 3)}, availability ${num(s.availability, 3)}, correctness ${num(s.correctness, 3)}, ETA ${num(s.eta, 3)}, blast radius ${num(s.blast_radius, 3)} over ${s.calls} calls in ${s.tasks} tasks; injected ${
          Object.entries(s.injected)
            .map(([fault, count]) => `${fault} × ${count}`)
            .join(', ') || 'nothing'
        }.`,
        '',
      );
    }
    if (step.probe)
      out.push(
        `Verdict ${step.probe.verdict}; ${Object.entries(step.probe.summary)
          .map(([key, value]) => `${key} ${value}`)
          .join(', ')}${step.probe.failedLeaves.length ? `; failed: ${step.probe.failedLeaves.join(', ')}` : ''}.`,
        '',
      );
  }
  if (result.commands.length > 0) {
    out.push('## Commands', '');
    for (const command of result.commands) {
      out.push(
        `- ${command.id}: ` +
          `${command.startError ? `could not start (${command.startError})` : command.timedOut ? 'timed out' : command.exitCode === null ? `killed by ${command.signal}` : `exit ${command.exitCode}`}, ` +
          `${ms(command.startedAtMs)}–${ms(command.endedAtMs)}`,
      );
      if (command.output.trim())
        out.push('', '```', command.output.trim().split('\n').slice(-20).join('\n'), '```', '');
    }
  }
  if (result.rollbacks.length > 0) {
    out.push('', '## Rollbacks', '');
    for (const rollback of result.rollbacks)
      out.push(
        `- \`${rollback.command}\`: ${rollback.startError ? `could not start (${rollback.startError})` : rollback.timedOut ? 'timed out' : `exit ${rollback.exitCode}`}`,
      );
  }
  const failures = Object.entries(result.connectFailures);
  if (failures.length > 0)
    out.push(
      '',
      `The proxies could not reach a dependency: ` +
        `${failures.map(([reason, count]) => `${reason} × ${count}`).join(', ')}.`,
    );
  out.push('', `Seed ${result.seed ?? '—'}; started ${result.startedAt}, ended ${result.endedAt}.`);
  return `${out.join('\n')}\n`;
}
