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
import type { FieldDeclaration } from '../proxy/faults/declaration.js';
import { NETWORK_FAULTS } from '../proxy/faults/declarations.js';
import { HTTP_FAULTS } from '../proxy/http/declarations.js';
import type { ToolRegistry } from './define.js';
import { faultArgumentShape } from './fault-schemas.js';
import type { ToolContext } from './context.js';
import { commonInput, runScenarioCall, scenarioOutput, SCENARIO_ANNOTATIONS } from './scenario.js';

const { direction: _direction, side: _side, ...common } = commonInput;

/** The HTTP faults, the default one's first: its arguments lead the list. */
const HTTP_ARGUMENT_ORDER = [...HTTP_FAULTS].sort(
  (a, b) => Number(b.type === H.http_fault) - Number(a.type === H.http_fault),
);

const httpInput = {
  http_fault: z.enum(HTTP_FAULT_TYPES).optional().describe(`Default ${H.http_fault}`),
  probability: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe(`Chance a request gets the fault, seeded (default ${H.probability})`),
  // Each fault's own arguments, from its declaration (src/proxy/http/*.declaration.ts).
  ...Object.assign({}, ...HTTP_ARGUMENT_ORDER.map(faultArgumentShape)),
};

/** fault's shared parameter set: the network faults' fields are accepted, ignored and reported. */
const IGNORED = [
  'direction',
  'side',
  ...NETWORK_FAULTS.flatMap((fault) => fault.fields as readonly FieldDeclaration[]).flatMap((field) =>
    field.argument ? [field.argument.name] : [],
  ),
];

export function registerHttpScenarioTool(tools: ToolRegistry, ctx: ToolContext): void {
  // family: http
  tools.register(
    {
      name: 'fault_run_http_error_impact_scenario',
      toolset: 'http',
      title: 'Run an HTTP fault impact scenario',
      description:
        'Measures how an HTTP endpoint copes with an HTTP fault: a local ' +
        'proxy answers errors (default 500, upstream not called), ' +
        '429s, hangs, malformed or field-stripped JSON, resets or cut ' +
        'bodies, with a seeded probability, while open-loop load ' +
        '(num_clients × rps requests/s) runs for duration. Only url is ' +
        "required. Returns fault's markdown report and a verdict. " +
        'Takes about duration; sends progress; cancellable. No LLM.',
      input: { ...common, ...httpInput },
      output: scenarioOutput,
      outline: true,
      annotations: SCENARIO_ANNOTATIONS,
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
      return runScenarioCall(spec, call, ctx.config.allowProduction);
    },
  );
}
