/**
 * The five impact-scenario tools, under fault's names and argument names: each runs one network
 * fault through the in-process proxy while open-loop load drives the endpoint, and answers with
 * fault's markdown report (text) and every number in it (structuredContent).
 *
 * Each tool's schema carries only its own fault's fields; everything but `url` has a default,
 * stated in its description (schemas carry no `default` keyword, which Gemini rejects).
 *
 * The scenario runner, the proxy and the report load on the first call (import() in the
 * handlers): the schemas need only the leaf modules of names and defaults.
 */
import * as z from 'zod';
import { CancelledError } from '../kernel/errors.js';
import type { FaultType } from '../proxy/index.js';
import { NETWORK_FAULTS } from '../proxy/faults/declarations.js';
import type { ScenarioArguments, ScenarioSpec } from '../scenario/index.js';
import { SCENARIO_DEFAULTS } from '../scenario/defaults.js';
import type { ToolAnnotationsExplicit, ToolCall, ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';
import { faultArgumentShape } from './fault-schemas.js';

/** Sends traffic to the user's endpoint: not read-only, not idempotent, open world; it deletes nothing. */
export const SCENARIO_ANNOTATIONS: ToolAnnotationsExplicit = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

const D = SCENARIO_DEFAULTS;

export const commonInput = {
  url: z.string().describe('http(s) URL to load (loopback unless the server allows the host)'),
  method: z.string().optional().describe(`Default ${D.method}`),
  body: z.string().optional().describe('JSON body (default none)'),
  headers: z.array(z.string()).optional().describe('"Name: value" each'),
  duration: z.string().optional().describe(`e.g. 500ms, 1m30s (default ${D.duration})`),
  num_clients: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`Connections, a request in flight each (default ${D.num_clients})`),
  rps: z.number().min(0).optional().describe(`Requests/s per client (default ${D.rps})`),
  timeout: z.number().min(0).optional().describe(`Per request, in seconds (default ${D.timeout})`),
  expect_status: z.string().optional().describe('Success statuses, e.g. "200-299,404" (default "2xx,3xx")'),
  max_connections: z.number().int().min(1).optional().describe('Default rate × timeout, ≤ 1000'),
  proxies: z
    .array(z.string())
    .optional()
    .describe(
      "LOCAL=REMOTE mappings of the app's outbound calls " +
        '("34000=127.0.0.1:5432"): the fault acts there (default none)',
    ),
  direction: z
    .enum(['ingress', 'egress', 'both'])
    .optional()
    .describe('What the proxy reads (default ingress; blackhole: both) or writes on side'),
  side: z.enum(['server', 'client']).optional().describe('server: proxy↔target (default); client: client↔proxy'),
  slos: z.array(z.string()).optional().describe('e.g. "99% @ 350ms", "p95 < 200ms", "errors < 1%" (default those)'),
  baseline: z.boolean().optional().describe('Run without the fault first, for the impact (default false)'),
  seed: z.number().int().optional().describe('Default random, reported'),
  fault_start: z.string().optional().describe('Duration or % of duration (default 0)'),
  fault_duration: z.string().optional().describe('Duration or % (default to the end)'),
  strategy: z
    .enum(['load', 'capacity'])
    .optional()
    .describe('load: open loop (default); capacity: closed loop, max req/s'),
  insecure_tls: z.boolean().optional().describe('Accept any certificate (default false)'),
};

/** Each fault's own arguments, from its declaration (src/proxy/faults/*.declaration.ts). */
const faultInputs = Object.fromEntries(
  NETWORK_FAULTS.map((declaration) => [declaration.type, faultArgumentShape(declaration)]),
) as Record<FaultType, z.ZodRawShape>;

/** One tool per scenario fault, named and described from its declaration, in the declarations' order. */
const TOOLS: Array<{ type: FaultType; name: string; title: string; what: string }> = NETWORK_FAULTS.map(
  (declaration) => ({
    type: declaration.type,
    name: `fault_run_${declaration.type}_impact_scenario`,
    title: `Run a ${declaration.type.replace(/_/g, ' ')} impact scenario`,
    what: declaration.scenario,
  }),
);

/**
 * The result's outline: the fields an agent decides on are typed; the rest (the request echoed,
 * timings, every number of the report) is there but left open, so tools/list stays small. The
 * full shape is ScenarioResult in src/scenario/result.ts.
 */
const phaseOutline = z.looseObject({
  passed: z.boolean(),
  load: z
    .looseObject({
      requests: z.number(),
      errors: z.number(),
      latency: z.looseObject({ p50: z.number(), p95: z.number(), p99: z.number() }).nullable().describe('ms'),
    })
    .nullable(),
  slos: z.array(z.looseObject({ title: z.string(), pass: z.boolean() })),
});
export const scenarioOutput = {
  verdict: z
    .enum(['passed', 'failed', 'inconclusive'])
    .describe(
      'inconclusive: the fault never touched the traffic, or the late generator may explain a failed latency SLO',
    ),
  verdictReasons: z.array(z.string()),
  verdictCaveats: z.array(z.string()).describe('what did not decide the verdict (the load generator ran behind)'),
  fault: z.looseObject({ type: z.string(), description: z.string() }),
  run: phaseOutline,
  // Outlined once (for run): the baseline phase has the same shape.
  baseline: z.looseObject({ passed: z.boolean() }).nullable().describe('As run'),
  ignoredArguments: z.array(z.string()),
};

/**
 * fault's later versions gave all five scenario tools one parameter set, so scripts may send, say,
 * `rate` to the latency tool, or fault's HTTP-error fields: accepted, ignored, and reported.
 */
const FAULT_SHARED_FIELDS = ['probability', 'status_code', 'error_body'];
function ignoredFor(type: FaultType): string[] {
  const own = new Set(Object.keys(faultInputs[type]));
  const others = Object.values(faultInputs).flatMap((shape) => Object.keys(shape));
  return [...new Set([...others, ...FAULT_SHARED_FIELDS])].filter((name) => !own.has(name));
}

export function registerScenarioTools(tools: ToolRegistry, ctx: ToolContext): void {
  for (const tool of TOOLS) {
    tools.register(
      {
        name: tool.name,
        toolset: 'scenario',
        title: tool.title,
        description:
          `Measures how an HTTP endpoint copes with a network fault: a local proxy ${tool.what} while open-loop load ` +
          `(num_clients × rps requests/s) runs for duration. Only url is required. Returns fault's markdown report ` +
          `(percentiles, SLOs, errors by class, timeline) and a verdict: passed, failed or inconclusive. Takes about ` +
          `duration (twice with baseline); sends progress; cancellable. No LLM.`,
        input: { ...commonInput, ...faultInputs[tool.type] },
        output: scenarioOutput,
        outline: true,
        annotations: SCENARIO_ANNOTATIONS,
        ignoredArguments: ignoredFor(tool.type),
      },
      async (args, call) => {
        const { scenarioFromArguments } = await import('../scenario/index.js');
        const spec = await scenarioFromArguments(tool.type, args as unknown as ScenarioArguments, ctx.config.scenario);
        ctx.log.info(
          '%s: %s %s for %d ms at %d req/s',
          tool.name,
          spec.method,
          spec.url,
          spec.durationMs,
          spec.clients * spec.rps,
        );
        return runScenarioCall(spec, call, ctx.config.allowProduction);
      },
    );
  }
}

/**
 * Runs a validated scenario for one tool call (progress, cancellation, ignored arguments) and
 * renders it: shared by the network scenario tools and the HTTP one.
 */
export async function runScenarioCall(
  spec: ScenarioSpec,
  call: ToolCall,
  allowProduction: boolean,
): Promise<{ text: string; structured: z.infer<z.ZodObject<typeof scenarioOutput>> }> {
  const [{ runScenario }, { renderReport }] = await Promise.all([
    import('../scenario/index.js'),
    import('../report/markdown.js'),
  ]);
  const result = await runScenario(spec, {
    signal: call.signal,
    ignoredArguments: call.ignoredArguments,
    allowProduction,
    onProgress: (progress) => call.progress(progress.doneMs, progress.totalMs, progress.message),
  }).catch((error: unknown) => {
    throw call.signal.aborted ? new CancelledError() : error;
  });
  return { text: renderReport(result), structured: result as unknown as z.infer<z.ZodObject<typeof scenarioOutput>> };
}
