/**
 * Every program an experiment would start, as the consent check (src/consent) sees it: its
 * expectations' commands, its rollbacks, and the MCP servers its tool-call and probe steps spawn.
 * The runner has them approved before anything runs; the dry run lists them with their verdicts.
 */
import type { ProgramPolicy, ProgramRequest, Verdict } from '../consent/index.js';
import type { Experiment, McpTarget } from './model.js';
import { commandRequest } from './probes.js';

export const EXPECTATION_COMMAND_WHY = "an expectation's command";
export const ROLLBACK_WHY = 'a rollback, run when the experiment ends';

/** The program a tool-call or probe step's server is, when it is spawned (not a url). */
export function serverRequest(server: McpTarget, why: string): ProgramRequest | undefined {
  if (server.command === undefined) return undefined;
  return { argument: server.argument ?? 'command', command: server.command, args: server.args, why };
}

export function programsOf(experiment: Experiment): ProgramRequest[] {
  const requests: ProgramRequest[] = [];
  for (const expectation of experiment.expectations)
    if (expectation.kind === 'command') requests.push(commandRequest(expectation.command, EXPECTATION_COMMAND_WHY));
  for (const step of experiment.steps) {
    if (step.kind === 'fault') continue;
    const why =
      step.kind === 'toolcall'
        ? 'the MCP server a tool-call step puts behind its proxy'
        : 'the MCP server a probe step probes';
    const request = serverRequest(step.server, why);
    if (request) requests.push(request);
  }
  for (const rollback of experiment.rollbacks) requests.push(commandRequest(rollback, ROLLBACK_WHY));
  return requests;
}

/** For the dry run: each program, its argv, and whether it would run. */
export interface ProgramPlan {
  argument: string;
  argv: string[];
  cwd: string | null;
  why: string;
  /** allowed, ask (a person would be asked) or refused. */
  verdict: Verdict['status'];
  detail: string;
}

export function programPlan(experiment: Experiment, programs: ProgramPolicy): ProgramPlan[] {
  return programsOf(experiment).map((request) => {
    const verdict = programs.verdict(request);
    return {
      argument: request.argument,
      argv: [request.command, ...request.args],
      cwd: request.cwd ?? null,
      why: request.why,
      verdict: verdict.status,
      detail:
        verdict.status === 'allowed'
          ? `allowed by ${verdict.by}`
          : verdict.status === 'ask'
            ? 'the person would be asked (elicitation)'
            : verdict.reason,
    };
  });
}
