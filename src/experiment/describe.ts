/**
 * What a validated experiment will do, in order, without doing it: `faultline experiment
 * validate` prints it, and fault_run_experiment answers it for dry_run.
 */
import { formatDuration } from '../duration.js';
import type { Experiment } from './model.js';
import { describeWindow, injectingSteps } from './timeline.js';
import { programPlan, type ProgramPlan } from './programs.js';
import { ProgramPolicy } from '../consent/index.js';

export interface PlanSummary {
  title: string;
  format: Experiment['format'];
  durationMs: number;
  load: string | null;
  proxies: string[];
  control: string[];
  phases: { baseline: string; inject: string; recover: string };
  /** False with no fault or tool-call step: the whole run is the baseline, and expectations are judged over it. */
  injects: boolean;
  steps: Array<{ name: string; kind: string; window: string; what: string }>;
  expectations: Array<{ id: string; title: string; window: string | null }>;
  abortWhen: string[];
  notChecked: string[];
  /** Every program the run would start, and whether it may (src/consent). */
  commands: ProgramPlan[];
}

/** `programs`: whose consent decides the commands' verdicts (default the person at the shell's). */
export function summarizePlan(experiment: Experiment, programs: ProgramPolicy = ProgramPolicy.owner()): PlanSummary {
  const load = experiment.load;
  return {
    title: experiment.title,
    format: experiment.format,
    durationMs: experiment.durationMs,
    load: load
      ? `${load.method} ${load.url} at ${load.clients * load.rps} ` +
        `requests/s for ${formatDuration(load.durationMs)} (timeout ` +
        `${formatDuration(load.timeoutMs)})`
      : null,
    proxies: experiment.proxies.map((mapping) => mapping.text),
    control: experiment.control.map((plane) => `${plane.name}: ${plane.url} (token from ${plane.tokenEnv})`),
    phases: {
      baseline: describeWindow(experiment.phases.baseline),
      inject: describeWindow(experiment.phases.inject),
      recover: describeWindow(experiment.phases.recover),
    },
    injects: injectingSteps(experiment.steps).length > 0,
    steps: experiment.steps.map((step) => ({
      name: step.name,
      kind: step.kind,
      window: `${formatDuration(step.atMs)}–${step.forMs === undefined ? 'done' : formatDuration(step.atMs + step.forMs)}`,
      what:
        step.kind === 'fault'
          ? `${JSON.stringify(step.raw)} ${step.placement.plane === 'proxy' ? `on #${step.placement.target}` : `through ${step.placement.control} on ${step.placement.target}`}`
          : step.kind === 'toolcall'
            ? `${step.calls.length} calls × ${step.tasks} tasks against ` +
              `${step.server.url ?? step.server.command}, ${step.plan.faults.length} ` +
              `plan faults${step.expect.length ? `; expect ${step.expect.map((c) => c.text).join(', ')}` : ''}`
            : `probe ${step.server.url ?? step.server.command}${step.families.length ? ` (${step.families.join(', ')})` : ''}`,
    })),
    expectations: [
      ...experiment.expectations.map((e) => ({ id: e.id, title: e.title, window: describeWindow(e.window) })),
      ...(experiment.recoverWithinMs !== undefined
        ? [
            {
              id: 'recover_within',
              title:
                `back to the steady state within ${formatDuration(experiment.recoverWithinMs)} ` +
                `of the last fault's end`,
              window: null,
            },
          ]
        : []),
    ],
    abortWhen: experiment.abort.map((rule) => rule.text),
    notChecked: experiment.notChecked,
    commands: programPlan(experiment, programs),
  };
}

export function renderPlan(summary: PlanSummary): string {
  const out = [
    `${summary.title}: ` +
      `valid${summary.format === 'mcp-chaos-monkey' ? " (mcp-chaos-monkey's scenario format)" : ''}; ` +
      `the run lasts ${formatDuration(summary.durationMs)}.`,
  ];
  if (summary.load) out.push(`load: ${summary.load}`);
  if (summary.proxies.length) out.push(`proxies: ${summary.proxies.join(', ')}`);
  if (summary.control.length) out.push(`control planes: ${summary.control.join('; ')}`);
  out.push(
    summary.injects
      ? `phases: baseline ${summary.phases.baseline}, inject ${summary.phases.inject}, ` +
          `recover ${summary.phases.recover}`
      : `phases: none (no fault or tool-call step): the whole run ${summary.phases.baseline} is the baseline, ` +
          'and expect and steady_state are judged over it',
  );
  for (const step of summary.steps)
    out.push(`  ${step.window.padEnd(14)} ${step.kind.padEnd(8)} ${step.name}: ${step.what}`);
  for (const e of summary.expectations) out.push(`  expect ${e.id}: ${e.title}${e.window ? ` [${e.window}]` : ''}`);
  for (const rule of summary.abortWhen) out.push(`  abort when ${rule}`);
  for (const text of summary.notChecked) out.push(`  not checked: ${text}`);
  for (const command of summary.commands)
    out.push(
      `  starts ${command.argument}: ${JSON.stringify(command.argv)}${command.cwd ? ` in ${command.cwd}` : ''} ` +
        `(${command.why}): ${command.verdict === 'refused' ? `REFUSED: ${command.detail}` : command.detail}`,
    );
  return `${out.join('\n')}\n`;
}
