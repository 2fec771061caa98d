/**
 * The tool-call plane: an MCP server behind the fault-injecting proxy, its calls replayed as
 * tasks by the official SDK client, the SLIs of what the client received (src/toolcall).
 */
import { SCENARIO_LIMITS } from '../../toolcall/limits.js';
import type { Slis } from '../../toolcall/metrics.js';
import type { ToolcallStep } from '../model.js';
import { policyLookup, type SafetyPolicy } from './policy.js';
import type { ProgramPolicy } from '../../consent/index.js';

export type { Slis };

export async function runToolcallStep(
  step: ToolcallStep,
  policy: SafetyPolicy,
  signal: AbortSignal,
  onProgress: (message: string) => void,
  programs: ProgramPolicy,
): Promise<Slis> {
  // The url was checked when the experiment was read; its name is checked again at every connect.
  const target =
    step.server.url !== undefined
      ? { url: step.server.url, lookup: policyLookup(policy) }
      : { command: step.server.command!, args: step.server.args, argument: step.server.argument ?? 'command' };
  // Loaded here: the scenario runner brings the MCP SDK client, ajv and zod (~250 ms of CPU), which
  // every `faultline run` and experiment without a toolcall step would pay through runner.ts.
  const { runToolCallScenario } = await import('../../toolcall/scenario.js');
  const result = await runToolCallScenario({
    target,
    plan: step.plan,
    programs,
    allowProduction: policy.allowProduction,
    calls: step.calls,
    tasks: step.tasks,
    resilience: step.resilience,
    callTimeoutMs: Math.min(5 * step.plan.deadline_ms, 60_000),
    signal: AbortSignal.any([signal, AbortSignal.timeout(SCENARIO_LIMITS.runMs)]),
    onProgress: (_done, _total, message) => onProgress(message),
  });
  return result.slis;
}
