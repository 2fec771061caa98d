/**
 * fault_run_http_error_impact_scenario (toolset family `http`): fault's undocumented HTTP error
 * scenario tool with its arguments (status_code default 500, probability default 1, error_body),
 * plus `http_fault` to pick any of the eight HTTP faults, with each one's fields. Same common
 * arguments, report and verdicts as the network scenario tools (tools/scenario.ts).
 */
import * as z from 'zod';
import { HTTP_FAULT_TYPES } from '../proxy/vocabulary.js';
import type { HttpScenarioArguments } from '../scenario/index.js';
import { HTTP_SCENARIO_DEFAULTS as H } from '../scenario/defaults.js';
import type { ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';
import { commonInput, runScenarioCall, scenarioOutput, SCENARIO_ANNOTATIONS } from './scenario.js';

const { direction: _direction, side: _side, ...common } = commonInput;

const httpInput = {
  http_fault: z.enum(HTTP_FAULT_TYPES).optional().describe(`Default ${H.http_fault}`),
  probability: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(`Chance a request gets the fault, seeded (default ${H.probability})`),
  status_code: z.number().int().optional().describe(`error: status, 400..599 (default ${H.status_code})`),
  error_body: z.string().optional().describe('error: body (default {"error":"faultline injected error"})'),
  forward: z.boolean().optional().describe('error: call the upstream first, then replace its answer (default false)'),
  delay: z.number().min(0).optional().describe(`latency: ms before forwarding (default ${H.delay})`),
  retry_after: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(`rate_limit: Retry-After seconds of the 429 (default ${H.retry_after})`),
  hang: z
    .number()
    .min(0)
    .optional()
    .describe('timeout: ms held before the connection closes (default until the client gives up)'),
  missing_fields: z.array(z.string()).optional().describe('schema_mismatch: dot paths removed from JSON responses'),
  after_bytes: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(`connection_drop: body bytes before the cut (default ${H.after_bytes})`),
};

/** fault's shared parameter set: the network faults' fields are accepted, ignored and reported. */
const IGNORED = [
  'direction',
  'side',
  'latency',
  'deviation',
  'per_read_write_op',
  'distribution',
  'amplitude',
  'frequency',
  'rate',
  'unit',
  'bandwidth_scope',
  'loss_rate',
  'model',
  'rtt',
];

export function registerHttpScenarioTool(tools: ToolRegistry, ctx: ToolContext): void {
  // family: http
  tools.register(
    {
      name: 'fault_run_http_error_impact_scenario',
      toolset: 'http',
      title: 'Run an HTTP fault impact scenario',
      description:
        'Measures how an HTTP endpoint copes with an HTTP fault: a local proxy answers errors (default 500, upstream not called), ' +
        '429s, hangs, malformed or field-stripped JSON, resets or cut bodies, with a seeded probability, while open-loop load ' +
        "(num_clients × rps requests/s) runs for duration. Only url is required. Returns fault's markdown report and a verdict. " +
        'Takes about duration; sends progress; cancellable. No LLM.',
      input: { ...common, ...httpInput },
      output: scenarioOutput,
      outline: true,
      annotations: SCENARIO_ANNOTATIONS,
      injectsFaults: true,
      ignoredArguments: IGNORED,
    },
    async (args, call) => {
      const { httpScenarioFromArguments } = await import('../scenario/index.js');
      const spec = await httpScenarioFromArguments(args as unknown as HttpScenarioArguments, ctx.config.scenario);
      ctx.log.info(
        'fault_run_http_error_impact_scenario: %s %s for %d ms, %s',
        spec.method,
        spec.url,
        spec.durationMs,
        spec.httpFault.type,
      );
      return runScenarioCall(spec, call);
    },
  );
}
