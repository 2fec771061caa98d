/**
 * The MCP robustness plane: the runtime-fault probes against a server (src/probe), every process
 * they spawn reaped before this returns.
 */
import { loadTaxonomy, probeVerdict, runProbe, type ProbeReport, type ProbeVerdict } from '../../probe/index.js';
import { PROBE_DEFAULTS } from '../../probe/limits.js';
import type { ProbeStep } from '../model.js';
import type { ProgramPolicy } from '../../consent/index.js';

export type { ProbeReport, ProbeVerdict };

export async function runProbeStep(
  step: ProbeStep,
  signal: AbortSignal,
  onProgress: (message: string) => void,
  programs: ProgramPolicy,
  allowProduction: boolean,
): Promise<{ report: ProbeReport; verdict: ProbeVerdict }> {
  const taxonomy = await loadTaxonomy();
  const target =
    step.server.url !== undefined
      ? { kind: 'http' as const, url: step.server.url }
      : {
          kind: 'stdio' as const,
          command: step.server.command!,
          args: step.server.args,
          argument: step.server.argument ?? 'command',
        };
  const report = await runProbe(target, taxonomy, {
    cases: step.cases,
    seed: PROBE_DEFAULTS.seed,
    ...(step.families.length > 0 ? { families: step.families } : {}),
    allowWrites: step.allowWrites,
    allowProduction,
    programs,
    callTimeoutMs: step.callTimeoutMs,
    overallTimeoutMs: step.forMs ?? PROBE_DEFAULTS.overallTimeoutMs,
    signal,
    onProgress,
  });
  return { report, verdict: probeVerdict(report) };
}
