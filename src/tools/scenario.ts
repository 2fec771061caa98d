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
import { CancelledError } from '../errors.js';
import type { FaultType } from '../proxy/index.js';
import { BANDWIDTH_UNITS, LATENCY_DISTRIBUTIONS, LOSS_MODELS } from '../proxy/vocabulary.js';
import type { ScenarioArguments, ScenarioSpec } from '../scenario/index.js';
import { SCENARIO_DEFAULTS } from '../scenario/defaults.js';
import type { ToolAnnotationsExplicit, ToolCall, ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';

/** Sends traffic to the user's endpoint: not read-only, not idempotent, open world; it deletes nothing. */
export const SCENARIO_ANNOTATIONS: ToolAnnotationsExplicit = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

const D = SCENARIO_DEFAULTS;

export const commonInput = {
  url: z.string().describe('http(s) endpoint to load; loopback/private unless remote targets are allowed'),
  method: z.string().optional().describe(`HTTP method (default ${D.method})`),
  body: z.string().optional().describe('Request body, sent as application/json (default none)'),
  headers: z.array(z.string()).optional().describe('Extra headers, each "Name: value"'),
  duration: z.string().optional().describe(`Load duration, e.g. 500ms, 10s, 1m30s (default ${D.duration})`),
  num_clients: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`Keep-alive connections open at start, one request in flight each; more open on demand up to max_connections (default ${D.num_clients})`),
  rps: z.number().min(0).optional().describe(`Requests/s per client; total = num_clients × rps (default ${D.rps})`),
  timeout: z.number().min(0).optional().describe(`Per-request timeout in seconds from the intended start (default ${D.timeout})`),
  expect_status: z.string().optional().describe('Statuses counted as success, e.g. "200", "200-299,404" (default "2xx,3xx"); others are errors'),
  max_connections: z.number().int().min(1).optional().describe('Most connections opened when all are busy (default rate × timeout, at most 1000 and within the fd limit)'),
  proxies: z
    .array(z.string())
    .optional()
    .describe(
      'LOCAL=REMOTE mappings for the app\'s outbound calls, e.g. "34000=127.0.0.1:5432"; the fault then applies there and the load goes straight to url (default none: fault between load and url)',
    ),
  direction: z.enum(['ingress', 'egress', 'both']).optional().describe('ingress = what the proxy reads, egress = what it writes (default ingress)'),
  side: z.enum(['server', 'client']).optional().describe('server = proxy↔target, client = client↔proxy socket (default server; server+ingress = responses)'),
  slos: z.array(z.string()).optional().describe('SLOs like "99% @ 350ms", "p95 < 200ms", "errors < 1%" (default: those with "95% @ 200ms" for p95)'),
  baseline: z.boolean().optional().describe('Run without the fault first and report the impact (doubles run time; default false)'),
  seed: z.number().int().optional().describe('Seed for random fault decisions (default random, reported)'),
  fault_start: z.string().optional().describe('Fault start, a duration or % of duration, e.g. "2s", "20%" (default 0)'),
  fault_duration: z.string().optional().describe('Fault length, a duration or % (default to the end)'),
  strategy: z.enum(['load', 'capacity']).optional().describe('load = open-loop fixed rate (default); capacity = closed loop, reports requests/s sustained'),
  insecure_tls: z.boolean().optional().describe('Accept any https certificate (default false)'),
};

const faultInputs: Record<FaultType, z.ZodRawShape> = {
  latency: {
    latency: z.number().min(0).optional().describe(`Added delay in milliseconds: the mean of the distribution (default ${D.latency})`),
    deviation: z.number().min(0).optional().describe(`Standard deviation in milliseconds (default ${D.deviation})`),
    per_read_write_op: z.boolean().optional().describe('Delay every chunk instead of once per request/response message (default false)'),
    distribution: z.enum(LATENCY_DISTRIBUTIONS).optional().describe('normal (default), uniform, pareto or pareto_normal'),
  },
  jitter: {
    amplitude: z.number().min(0).optional().describe(`Largest extra delay in milliseconds; each chunk gets a delay in [0, amplitude] (default ${D.amplitude})`),
    frequency: z.number().min(0).optional().describe(`How many times a second the delay is redrawn, in Hz (default ${D.frequency})`),
  },
  bandwidth: {
    rate: z.number().min(0).optional().describe(`Bandwidth cap in unit (default ${D.rate})`),
    unit: z.string().optional().describe(`Unit of rate, in bytes as fault means it: bps (B/s), kbps (1e3 B/s), mbps, gbps; or bits: bit/s, kbit/s, mbit/s, gbit/s (default ${D.unit}). Accepted: ${BANDWIDTH_UNITS.join(', ')}`),
    bandwidth_scope: z.enum(['connection', 'shared']).optional().describe('Cap each connection separately (default) or all connections together'),
  },
  packet_loss: {
    loss_rate: z.number().min(0).max(1).optional().describe(`Fraction of 1448-byte TCP segments lost, 0..1 (default ${D.loss_rate}); each loss stalls the stream for TCP's recovery time`),
    model: z.enum(LOSS_MODELS).optional().describe('bernoulli (independent losses, default) or gilbert_elliott (bursty)'),
    rtt: z.number().min(0).optional().describe('Round-trip time in ms the recovery stall is based on (default 20)'),
  },
  blackhole: {},
};

const TOOLS: Array<{ type: FaultType; name: string; title: string; what: string }> = [
  { type: 'latency', name: 'fault_run_latency_impact_scenario', title: 'Run a latency impact scenario', what: 'adds latency (once per request/response, or per chunk)' },
  { type: 'jitter', name: 'fault_run_jitter_impact_scenario', title: 'Run a jitter impact scenario', what: 'adds a varying delay in [0, amplitude], redrawn frequency times a second' },
  { type: 'packet_loss', name: 'fault_run_packet_loss_impact_scenario', title: 'Run a packet loss impact scenario', what: 'loses TCP segments, stalling the stream for the retransmission time as real loss does' },
  { type: 'bandwidth', name: 'fault_run_bandwidth_impact_scenario', title: 'Run a bandwidth impact scenario', what: 'caps the bandwidth' },
  { type: 'blackhole', name: 'fault_run_blackhole_impact_scenario', title: 'Run a blackhole impact scenario', what: 'stops the traffic (bytes are held, not dropped) until the fault ends' },
];

/**
 * The result's outline: the fields an agent decides on are typed, the rest (every number of the
 * report) is there but left open, so tools/list stays small — the full shape is ScenarioResult in
 * src/scenario/result.ts, documented in the README.
 */
const phaseOutline = z.looseObject({
  phase: z.enum(['baseline', 'fault']),
  passed: z.boolean(),
  load: z
    .looseObject({
      requests: z.number(),
      errors: z.number(),
      latency: z.looseObject({ mean: z.number(), p50: z.number(), p95: z.number(), p99: z.number() }).nullable(),
    })
    .nullable()
    .describe('Open-loop figures: counts, errors by class, latency/service time/TTFB stats, percentiles, per-second timeline'),
  capacity: z.looseObject({ requestsPerSecond: z.number() }).nullable().describe('Closed-loop figures (strategy capacity)'),
  slos: z.array(z.looseObject({ title: z.string(), pass: z.boolean() })),
});
export const scenarioOutput = {
  title: z.string(),
  url: z.string(),
  method: z.string(),
  headers: z.record(z.string(), z.string()).describe('Request headers, credentials masked'),
  hasBody: z.boolean(),
  timeoutMs: z.number(),
  strategy: z.looseObject({ type: z.enum(['load', 'capacity']) }),
  fault: z.looseObject({ type: z.string(), description: z.string(), seed: z.union([z.number(), z.string()]) }),
  proxies: z.array(z.string()).describe('The proxy mappings served'),
  routedThroughProxy: z.boolean().describe('true: the load went through the proxy; false: the fault was on the app\'s outbound calls'),
  ignoredArguments: z.array(z.string()).describe('Arguments given that belong to other fault types, ignored'),
  startedAt: z.string(),
  endedAt: z.string(),
  // Outlined once (for run): the baseline phase has the same shape, and repeating the outline
  // cost every scenario tool 1.3 KB of tools/list.
  baseline: z.looseObject({ passed: z.boolean() }).nullable().describe('The no-fault run when baseline was asked for: the same shape as run'),
  run: phaseOutline.describe('The run with the fault'),
  impact: z.array(z.looseObject({ metric: z.string() })).describe('Baseline vs fault, when a baseline ran'),
  verdict: z.enum(['passed', 'failed', 'inconclusive']).describe('failed: an SLO failed; inconclusive: the fault never touched the measured traffic; else passed'),
  verdictReasons: z.array(z.string()).describe('Why, and what to do'),
  passed: z.boolean().describe('verdict is passed'),
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
          `Measures the impact of a network fault on an HTTP endpoint: a local fault proxy ${tool.what}, while open-loop load ` +
          `(num_clients × rps requests/s, latency from each request's intended start) runs for duration. Only url is required. ` +
          `Returns fault's markdown report (run overview, percentiles, SLO verdicts) plus errors by class, a per-second ` +
          `timeline with a chart, fault counters and, with baseline, the impact; verdict passed, failed or inconclusive. ` +
          `Takes duration plus at most timeout to drain (twice with baseline); sends progress; cancellable. No LLM needed.`,
        input: { ...commonInput, ...faultInputs[tool.type] },
        output: scenarioOutput,
        annotations: SCENARIO_ANNOTATIONS,
        ignoredArguments: ignoredFor(tool.type),
      },
      async (args, call) => {
        const { scenarioFromArguments } = await import('../scenario/index.js');
        const spec = await scenarioFromArguments(tool.type, args as unknown as ScenarioArguments, ctx.config.scenario);
        ctx.log.info('%s: %s %s for %d ms at %d req/s', tool.name, spec.method, spec.url, spec.durationMs, spec.clients * spec.rps);
        return runScenarioCall(spec, call);
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
): Promise<{ text: string; structured: z.infer<z.ZodObject<typeof scenarioOutput>> }> {
  const [{ runScenario }, { renderReport }] = await Promise.all([import('../scenario/index.js'), import('../report/markdown.js')]);
  const result = await runScenario(spec, {
    signal: call.signal,
    ignoredArguments: call.ignoredArguments,
    onProgress: (progress) => call.progress(progress.doneMs, progress.totalMs, progress.message),
  }).catch((error: unknown) => {
    throw call.signal.aborted ? new CancelledError() : error;
  });
  return { text: renderReport(result), structured: result as unknown as z.infer<z.ZodObject<typeof scenarioOutput>> };
}
