/**
 * fault_run_tool_call_chaos_scenario (toolset family: toolcall): puts an MCP server behind the
 * tool-call-plane proxy with a fault plan, replays calls as tasks, and answers with the report
 * (text) and every SLI (structuredContent). The domain work is in src/toolcall/.
 */
import * as z from 'zod';
import { CancelledError, InputError } from '../kernel/errors.js';
import { checkCommandLine } from '../command-line.js';
import type { ToolAnnotationsExplicit, ToolRegistry } from './define.js';
import { objectArgument, objectListArgument } from './arguments.js';
import { FAULT_TYPES } from '../toolcall/plan.js';
import { refuseUnknownKeys } from '../config-reader.js';
import type { ToolContext } from './context.js';
import type { LookupFunction } from 'node:net';
import { programsFor } from './programs.js';

/** Starts a process or calls an endpoint the agent names, and those tools may do anything: not read-only, open world.
 * */
const TOOLPLANE_ANNOTATIONS: ToolAnnotationsExplicit = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

const verdict = z.object({
  tool: z.string(),
  fault: z.string(),
  failures: z.number(),
  stopped: z.number(),
  retried: z.number(),
  runaway: z.number(),
  blind_retries: z.number(),
});

/** fault_run_tool_call_chaos_scenario's arguments; its result follows. */
const scenarioInput = {
  command: z.string().optional().describe('MCP server executable to spawn over stdio (give command or url)'),
  args: z.array(z.string()).optional().describe('Arguments of command'),
  url: z.string().optional().describe('Streamable-HTTP MCP endpoint (loopback unless the server allows the host)'),
  plan: objectArgument(
    {
      seed: z.number().int().optional(),
      deadline_ms: z.number().optional().describe('Per-call deadline (default 1000)'),
      faults: z
        .array(
          z.looseObject({
            type: z.enum(FAULT_TYPES),
            tools: z.array(z.string()).optional().describe('Names or globs (default all)'),
            probability: z.number().optional().describe('0..1 (default 1)'),
            after_calls: z.number().int().optional(),
            every: z.number().int().optional(),
          }),
        )
        .optional(),
    },
    'Fault plan (mcp-chaos format), or its YAML or JSON text (default: no faults)',
    { yaml: true },
  ).optional(),
  calls: objectListArgument(
    { tool: z.string() },
    'The calls of one task, each {"tool": name, "arguments": {…}} (or its JSON text); at most 100',
  ),
  tasks: z.number().int().min(1).max(100).optional().describe('Times the calls are replayed, each a task (default 10)'),
  seed: z.number().int().optional().describe("Seed of the fault decisions (default: the plan's seed)"),
  deadline_ms: z
    .number()
    .min(1)
    .max(600000)
    .optional()
    .describe(
      'Per-call deadline in ms for deadline adherence (default: the ' +
        "plan's, 1000); a call with no answer after 5 × this is cancelled",
    ),
  resilience: z.boolean().optional().describe('Retry a failed call up to 2 times (default false)'),
};

const scenarioOutput = {
  transport: z.enum(['stdio', 'http']),
  attempts: z.number(),
  calls: z.number(),
  tasks: z.number(),
  tcsr: z.number(),
  availability: z.number(),
  correctness: z.number(),
  eta: z.number(),
  schema_conformance: z.number(),
  deadline_adherence: z.number(),
  tcaf: z.number(),
  blast_radius: z.number(),
  error_rate: z.number(),
  predicted_blast_radius: z.number(),
  amplification: z.number(),
  queueing: z.object({ queued_attempts: z.number(), mean_ms: z.number(), p95_ms: z.number(), max_ms: z.number() }),
  injected: z.record(z.string(), z.number()),
  verdicts: z.array(verdict),
  internal_errors: z.number(),
  evicted: z.number(),
  client_errors: z.number(),
  upstream_failure: z
    .object({
      kind: z.enum(['exited', 'unreachable']),
      at: z.string(),
      attempts_before: z.number(),
      exit_code: z.number().optional(),
      signal: z.string().optional(),
      error: z.string().optional(),
      unanswered: z.number(),
      recovered_at: z.string().optional(),
      reached: z.number().optional(),
      outage_count: z.number().optional(),
      outages: z
        .array(z.object({ from: z.string(), to: z.string().optional(), error: z.string(), unanswered: z.number() }))
        .optional(),
    })
    .optional()
    .describe('Only when the server exited or could not be reached'),
};

export function registerToolcallTools(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_run_tool_call_chaos_scenario',
      toolset: 'toolcall',
      title: 'Run a tool-call chaos scenario',
      description:
        'Puts an MCP server (command + args over stdio, with the server ' +
        "owner's consent: --allow-commands, --allow-command or " +
        'elicitation; or url over streamable HTTP) behind a ' +
        'fault-injecting proxy, replays ' +
        'calls once per task and measures what a client receives: TCSR, ' +
        'availability, correctness, ETA, schema conformance, ' +
        'TCAF, deadline adherence, blast radius vs 1 − (1 − e)^TCAF, ' +
        'retry verdicts; text: the report. Sends progress; ' +
        'cancellable; the server process never outlives the call. No LLM.',
      input: scenarioInput,
      output: scenarioOutput,
      annotations: TOOLPLANE_ANNOTATIONS,
    },
    async (args, call) => {
      const { validatePlan, EMPTY_PLAN } = await import('../toolcall/plan.js');
      const { runToolCallScenario, SCENARIO_LIMITS } = await import('../toolcall/scenario.js');
      const target = await targetOf(args, ctx);
      const programs = programsFor(ctx, call);
      if ('command' in target)
        await programs.approve(
          [{ ...target, argument: 'command', why: 'the MCP server behind the tool-call proxy' }],
          call.signal,
        );
      let plan = args.plan === undefined ? EMPTY_PLAN : validatePlan(args.plan, 'plan');
      if (args.seed !== undefined) plan = { ...plan, seed: args.seed };
      if (args.deadline_ms !== undefined) plan = { ...plan, deadline_ms: args.deadline_ms };
      const calls = readCalls(args.calls, SCENARIO_LIMITS.calls);
      const tasks = args.tasks ?? 10;
      if (tasks * calls.length * (args.resilience ? 3 : 1) > SCENARIO_LIMITS.attempts)
        throw new InputError(
          `tasks: tasks × calls (× 3 with resilience) must stay at most ${SCENARIO_LIMITS.attempts}`,
        );
      const signal = AbortSignal.any([call.signal, AbortSignal.timeout(SCENARIO_LIMITS.runMs)]);
      const result = await runToolCallScenario({
        target,
        programs,
        allowProduction: ctx.config.allowProduction,
        plan,
        calls,
        tasks,
        resilience: args.resilience ?? false,
        callTimeoutMs: Math.min(5 * plan.deadline_ms, 60_000),
        signal,
        onProgress: (done, total, message) => call.progress(done, total, message),
      }).catch((error: unknown) => {
        throw call.signal.aborted ? new CancelledError() : error;
      });
      return {
        text: result.report,
        structured: { transport: result.transport, ...result.slis, client_errors: result.client_errors },
      };
    },
  );
}

/** The server under test: a command line to spawn (checked it can be), or a URL the target policy allows. */
async function targetOf(
  args: { command?: string | undefined; args?: string[] | undefined; url?: string | undefined },
  ctx: ToolContext,
): Promise<{ command: string; args: string[] } | { url: string; lookup: LookupFunction }> {
  if ((args.command === undefined) === (args.url === undefined))
    throw new InputError('command or url: give exactly one (command + args for stdio, url for streamable HTTP)');
  if (args.args !== undefined && args.command === undefined) throw new InputError('args: only with command');
  if (args.url !== undefined) {
    const [{ checkLoadTarget }, { targetLookup }] = await Promise.all([
      import('../scenario/target.js'),
      import('../target-policy.js'),
    ]);
    // Checked now, and again at every connect: the name may resolve elsewhere by then.
    const url = (await checkLoadTarget(args.url, ctx.config.scenario, 'url')).href;
    return { url, lookup: targetLookup(ctx.config.scenario) };
  }
  checkCommandLine(args.command!, args.args ?? []);
  return { command: args.command!, args: args.args ?? [] };
}

/** The calls of one task, each {tool, arguments}, 1 to `max` of them. */
function readCalls(
  calls: Array<Record<string, unknown>>,
  max: number,
): Array<{ tool: string; arguments: Record<string, unknown> }> {
  if (calls.length === 0 || calls.length > max) throw new InputError(`calls: give 1 to ${max} calls`);
  return calls.map((v, i) => {
    refuseUnknownKeys(v, ['tool', 'arguments'], `calls[${i}]`);
    if (typeof v.tool !== 'string' || v.tool === '') throw new InputError(`calls[${i}].tool: expected a tool name`);
    if (
      v.arguments !== undefined &&
      (typeof v.arguments !== 'object' || v.arguments === null || Array.isArray(v.arguments))
    ) {
      throw new InputError(`calls[${i}].arguments: expected an object`);
    }
    return { tool: v.tool, arguments: (v.arguments ?? {}) as Record<string, unknown> };
  });
}
