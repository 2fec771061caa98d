/**
 * The steps that act on an MCP server: a tool-call step (the server behind the tool-call plane's
 * proxy with a fault plan, calls replayed as tasks, its SLIs held to thresholds) and a probe step
 * (the runtime-fault probes against it). Their plans, limits and names are the tool-call plane's
 * and the probe's own.
 */
import { InputError } from '../kernel/errors.js';
import { EMPTY_PLAN, parsePlanText, validatePlan } from '../toolcall/plan.js';
import { SCENARIO_LIMITS } from '../toolcall/limits.js';
import { FAMILY_IDS, type FamilyId } from '../probe/taxonomy.js';
import { PROBE_DEFAULTS, PROBE_LIMITS } from '../probe/limits.js';
import { checkUrl, type SafetyPolicy } from './adapters/policy.js';
import { parseSliCondition } from './conditions.js';
import type { McpTarget, ProbeStep, ToolcallStep } from './model.js';
import { durationField } from './timeline.js';

type Raw = Record<string, unknown>;

export async function readMcpStep(
  kind: 'toolcall' | 'probe',
  step: Raw,
  where: string,
  index: number,
  atMs: number,
  forMs: number | undefined,
  policy: SafetyPolicy,
): Promise<ToolcallStep | ProbeStep> {
  const raw = step[kind] as Raw;
  const at = `${where}.${kind}`;
  const server = await readServer(raw, at, policy);
  const serverName = server.url ?? [server.command, ...server.args].join(' ');
  if (kind === 'toolcall') {
    const plan =
      raw.plan === undefined
        ? EMPTY_PLAN
        : typeof raw.plan === 'string'
          ? await parsePlanText(raw.plan, `${at}.plan`)
          : validatePlan(raw.plan, `${at}.plan`);
    const calls = (raw.calls as Raw[]).map((call, i) => {
      if (typeof call.tool !== 'string' || call.tool.trim() === '')
        throw new InputError(`${at}.calls[${i}].tool: a tool name`);
      const args = call.arguments ?? {};
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        throw new InputError(`${at}.calls[${i}].arguments: a mapping of argument names to values`);
      return { tool: call.tool, arguments: args as Record<string, unknown> };
    });
    if (calls.length === 0 || calls.length > SCENARIO_LIMITS.calls)
      throw new InputError(`${at}.calls: 1 to ${SCENARIO_LIMITS.calls} calls`);
    const tasks = (raw.tasks as number | undefined) ?? 10;
    const resilience = (raw.resilience as boolean | undefined) ?? false;
    if (tasks * calls.length * (resilience ? 3 : 1) > SCENARIO_LIMITS.attempts)
      throw new InputError(
        `${at}.tasks: tasks × calls (× 3 with resilience) must stay at most ${SCENARIO_LIMITS.attempts}`,
      );
    const deadline = raw.deadline_ms as number | undefined;
    if (deadline !== undefined && !(deadline >= 1 && deadline <= 600_000))
      throw new InputError(`${at}.deadline_ms: 1 to 600000`);
    return {
      kind,
      index,
      name: (step.name as string | undefined) ?? `tool calls to ${serverName}`,
      atMs,
      forMs,
      server,
      plan: deadline === undefined ? plan : { ...plan, deadline_ms: deadline },
      calls,
      tasks,
      resilience,
      expect: ((step.expect as string[] | undefined) ?? []).map((text, i) =>
        parseSliCondition(text, `${where}.expect[${i}]`),
      ),
    };
  }
  const families = ((raw.families as string[] | undefined) ?? []).map((family, i) => {
    const id = family.trim().toUpperCase();
    if (!(FAMILY_IDS as readonly string[]).includes(id))
      throw new InputError(`${at}.families[${i}]: "${family}" is not a family; accepted: ${FAMILY_IDS.join(', ')}`);
    return id as FamilyId;
  });
  const cases = (raw.cases as number | undefined) ?? PROBE_DEFAULTS.cases;
  if (cases > PROBE_LIMITS.cases) throw new InputError(`${at}.cases: at most ${PROBE_LIMITS.cases}`);
  const callTimeoutMs =
    raw.call_timeout === undefined
      ? PROBE_DEFAULTS.callTimeoutMs
      : durationField(raw.call_timeout, `${at}.call_timeout`);
  if (callTimeoutMs < 1 || callTimeoutMs > PROBE_LIMITS.callTimeoutMs)
    throw new InputError(`${at}.call_timeout: at most ${PROBE_LIMITS.callTimeoutMs / 1000}s`);
  const expect = step.expect as string[] | undefined;
  if (expect !== undefined && expect.length > 0)
    throw new InputError(`${where}.expect: a probe step passes when no leaf failed; expect: [] makes it report only`);
  return {
    kind,
    index,
    name: (step.name as string | undefined) ?? `probe of ${serverName}`,
    atMs,
    forMs,
    server,
    families,
    cases,
    allowWrites: (raw.allow_writes as boolean | undefined) ?? false,
    callTimeoutMs,
    mustPass: expect === undefined,
  };
}

async function readServer(raw: Raw, at: string, policy: SafetyPolicy): Promise<McpTarget> {
  if ((raw.command === undefined) === (raw.url === undefined))
    throw new InputError(
      `${at}: give command (+ args) for a server over stdio, or url for streamable HTTP — exactly one`,
    );
  if (raw.args !== undefined && raw.command === undefined) throw new InputError(`${at}.args: only with command`);
  if (raw.url !== undefined) return { url: (await checkUrl(String(raw.url), policy, `${at}.url`)).href, args: [] };
  if (String(raw.command).trim() === '') throw new InputError(`${at}.command: empty`);
  return { command: String(raw.command), argument: `${at}.command`, args: (raw.args as string[] | undefined) ?? [] };
}
