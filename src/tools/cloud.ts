/**
 * The cloud family (src/cloud behind MCP): FIS recommendations from a finding, validated FIS
 * experiment templates (or CloudFormation), and exports of a scenario to FIS, Chaos Mesh and k6.
 * All read-only and offline: nothing calls AWS or a cluster, nothing needs credentials.
 *
 * fis-recommender's object arguments (finding, recommendation, target_config) are objects in the
 * schemas, and JSON text of them is accepted too (tools/arguments.ts); src/cloud validates them.
 *
 * src/cloud (and, for exports, the scenario parser) loads on the first call: the schemas need only
 * the leaf modules of names and defaults.
 */
import * as z from 'zod';
import { InputError } from '../kernel/errors.js';
import { EXPORT_TARGETS, FIS_PLATFORMS } from '../cloud/export-targets.js';
import type { ScenarioArguments } from '../scenario/index.js';
import { SCENARIO_DEFAULTS } from '../scenario/defaults.js';
import type { FaultType } from '../proxy/index.js';
import { NETWORK_FAULT_TYPES } from '../proxy/vocabulary.js';
import { NETWORK_FAULTS } from '../proxy/faults/declarations.js';
import { LOCAL_READ_ONLY, type ToolRegistry } from './define.js';
import { objectArgument, objectOrListArgument, objectOrTextArgument } from './arguments.js';
import type { ToolContext } from './context.js';
import { labelledArgumentShape } from './fault-schemas.js';

const recommendationShape = z.object({
  action: z.string().describe('FIS action id'),
  failure: z.string(),
  why: z.array(z.string()).describe('What the finding named'),
  confidence: z.number().describe('0–0.95'),
  score: z.number(),
  duration: z.string().nullable().describe('ISO 8601; null when the action takes no duration'),
  parameters: z.record(z.string(), z.string()),
  parametersToSet: z.array(z.string()),
  targetResourceType: z.string().nullable(),
  targetKey: z.string().nullable(),
  stopCondition: z.object({ source: z.literal('aws:cloudwatch:alarm'), suggestion: z.string() }),
  localRehearsal: z
    .object({
      tool: z.string(),
      arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
      note: z.string(),
    })
    .nullable()
    .describe('The faultline tool rehearsing it locally'),
});

/** The target_config fields most templates set; the others are named in each argument's description. */
const targetConfigShape = {
  roleArn: z.string().optional().describe('IAM role ARN FIS assumes'),
  stopConditionArn: z.string().optional().describe('CloudWatch alarm ARN that stops the experiment'),
  noStopCondition: z.boolean().optional().describe('true to run without one (stated in the template)'),
  resourceType: z.string().optional().describe("Default: the action's own"),
  selectionMode: z.string().optional().describe('ALL (default), COUNT(n) or PERCENT(n)'),
  resourceArns: z.array(z.string()).optional().describe('At most 5'),
  description: z.string().optional(),
};

/**
 * Every network fault's arguments, from the declarations (src/proxy/faults/*.declaration.ts), each
 * description naming its fault: an argument of another fault than the one exported is refused.
 */
const exportFaultInputs: z.ZodRawShape = Object.assign({}, ...NETWORK_FAULTS.map(labelledArgumentShape));
const D = SCENARIO_DEFAULTS;

export function registerCloudTools(tools: ToolRegistry, ctx: ToolContext): void {
  registerRecommendTool(tools);
  registerTemplateTool(tools);
  registerExportTool(tools, ctx);
}

function registerRecommendTool(tools: ToolRegistry): void {
  tools.register(
    {
      name: 'fault_recommend_fis_experiments',
      toolset: 'cloud',
      title: 'Recommend AWS FIS experiments for a finding',
      description:
        'Turns a reliability finding into ranked AWS FIS experiments, ' +
        'offline (no LLM, no AWS), by the failure modes and ' +
        'services it names. Each: action, why, confidence, duration, ' +
        'parameters, target type, stop condition, and the local ' +
        'faultline scenario that rehearses it. Text: JSON {recommendations, finding_id, count}.',
      input: {
        finding: objectOrTextArgument(
          {
            id: z.string().optional(),
            summary: z.string().optional(),
            type: z.string().optional(),
            description: z.string().optional(),
          },
          'The finding: an object such as {id, summary, type, description} ' +
            '(any fields; their text is read), or plain text; at most 10 KB',
        ),
        resources: z.array(z.string()).optional().describe('ARNs or resource types (aws:rds:db) the finding concerns'),
        limit: z.number().int().min(1).max(20).optional().describe('Most recommendations (default 5)'),
      },
      output: {
        recommendations: z.array(recommendationShape),
        finding_id: z.string().nullable(),
        count: z.number(),
        detected: z.object({ services: z.array(z.string()), failureModes: z.array(z.string()) }),
      },
      annotations: LOCAL_READ_ONLY,
    },
    async ({ finding, resources, limit }) => {
      const { recommendExperiments } = await import('../cloud/index.js');
      // The output shape has no notes: each recommendation's `why` says what they say.
      const { notes: _notes, ...set } = recommendExperiments(finding, {
        resources: resources ?? [],
        limit: limit ?? 5,
      });
      return { text: JSON.stringify(set), structured: set };
    },
  );
}

function registerTemplateTool(tools: ToolRegistry): void {
  tools.register(
    {
      name: 'fault_create_fis_template',
      toolset: 'cloud',
      title: 'Create an AWS FIS experiment template',
      description:
        'Builds a complete FIS CreateExperimentTemplate input, validated ' +
        "against the FIS action catalog: the action's own target " +
        'key and resource type, accepted and required parameters, ISO ' +
        '8601 durations in range, selectionMode, tags or ≤5 ARNs, ' +
        'a CloudWatch-alarm stop condition. Never calls AWS. Text: the template JSON, or the CloudFormation document.',
      input: {
        recommendation: objectOrListArgument(
          {
            action: z.string().describe('FIS action id, e.g. aws:ecs:task-network-latency'),
            duration: z.string().optional().describe('ISO 8601, e.g. PT5M'),
            name: z.string().optional(),
          },
          'One recommendation as fault_recommend_fis_experiments returns ' +
            'it, or {action, parameters: {name: value}, duration}; an array ' +
            'of them for several actions (with name, startAfter)',
        ),
        target_config: objectArgument(
          { ...targetConfigShape, roleArn: z.string().describe('IAM role ARN FIS assumes') },
          'Also: tags or resourceArns or parameters (target selection), ' +
            'filters, targets {<action name>: selection}, templateTags, ' +
            'logConfiguration, experimentOptions',
        ),
        format: z
          .enum(['json', 'cloudformation'])
          .optional()
          .describe('json: the API input (default); cloudformation: an AWS::FIS::ExperimentTemplate resource'),
        yaml: z.boolean().optional().describe('CloudFormation as YAML instead of JSON (default false)'),
      },
      output: {
        format: z.enum(['json', 'cloudformation']),
        template: z.record(z.string(), z.unknown()).describe('The CreateExperimentTemplate input'),
        document: z.string().describe('What the text content carries'),
        warnings: z.array(z.string()),
      },
      annotations: LOCAL_READ_ONLY,
    },
    async ({ recommendation, target_config, format, yaml }) => {
      const { buildExperimentTemplate, renderCloudFormation } = await import('../cloud/index.js');
      const built = buildExperimentTemplate(recommendation, target_config);
      const chosen = format ?? 'json';
      if (chosen === 'json' && yaml) throw new InputError('yaml: applies to format cloudformation only');
      const document =
        chosen === 'json'
          ? JSON.stringify(built.template, null, 2)
          : await renderCloudFormation(built.template, yaml ? 'yaml' : 'json');
      return {
        text: document,
        structured: {
          format: chosen,
          template: built.template as unknown as Record<string, unknown>,
          document,
          warnings: built.warnings,
        },
      };
    },
  );
}

function registerExportTool(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_export_scenario',
      toolset: 'cloud',
      title: 'Export a scenario to FIS, Chaos Mesh or k6',
      description:
        'Writes one faultline scenario for an engine beyond one machine: ' +
        'fis (ECS/EKS network action template), chaos-mesh ' +
        '(NetworkChaos YAML: delay+jitter, loss, bandwidth, partition) or ' +
        'k6 (constant-arrival-rate script, thresholds from slos). ' +
        'Same arguments and defaults as the fault_run_* tools. A fault or ' +
        'setting with no exact equivalent is an error saying why. ' +
        'Nothing is run. Text: the document.',
      input: {
        to: z.enum(EXPORT_TARGETS).describe('fis, chaos-mesh or k6'),
        fault: z.enum(NETWORK_FAULT_TYPES).describe("The scenario's fault"),
        url: z.string().describe('The service endpoint (any host: nothing is loaded)'),
        method: z.string().optional().describe(`HTTP method (default ${D.method})`),
        body: z.string().optional().describe('Request body, sent as application/json'),
        headers: z.array(z.string()).optional().describe('"Name: value" lines'),
        duration: z.string().optional().describe(`Load length: 30s, 5m (default ${D.duration}; FIS actions need ≥ 1m)`),
        num_clients: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`Connections (default ${D.num_clients}); rate = num_clients × rps`),
        rps: z.number().min(0).optional().describe(`Requests/s per client (default ${D.rps})`),
        timeout: z.number().min(0).optional().describe(`Request timeout in seconds (default ${D.timeout})`),
        slos: z
          .array(z.string())
          .optional()
          .describe('"99% @ 350ms", "errors < 1%" (default fault\'s two and errors < 1%)'),
        fault_start: z.string().optional().describe('Duration or % of duration (default 0)'),
        fault_duration: z.string().optional().describe('Duration or % (default to the end)'),
        direction: z.enum(['ingress', 'egress', 'both']).optional().describe('Default ingress'),
        side: z.enum(['server', 'client']).optional().describe('Default server'),
        ...exportFaultInputs,
        platform: z.enum(FIS_PLATFORMS).optional().describe('fis: ecs (default) or eks actions'),
        target_config: objectArgument(
          targetConfigShape,
          'fis: as for fault_create_fis_template (+ kubernetesServiceAccount); placeholders fill the rest',
        ).optional(),
        namespace: z.string().optional().describe('chaos-mesh: namespace (default "default")'),
        selector: z.array(z.string()).optional().describe('chaos-mesh: pod labels key=value'),
      },
      output: {
        to: z.enum(EXPORT_TARGETS),
        fault: z.string(),
        format: z.enum(['json', 'yaml', 'javascript']),
        document: z.string(),
        notes: z.array(z.string()).describe('Placeholders to replace and how the engine differs, explicitly'),
      },
      annotations: LOCAL_READ_ONLY,
    },
    async (args) => {
      const { to, fault, platform, target_config, namespace, selector, ...scenario } = args;
      const [{ checkFaultArguments, EXPORT_LIMITS, exportScenario }, { scenarioFromArguments }] = await Promise.all([
        import('../cloud/index.js'),
        import('../scenario/index.js'),
      ]);
      checkFaultArguments(fault, scenario);
      const spec = await scenarioFromArguments(
        fault as FaultType,
        scenario as unknown as ScenarioArguments,
        EXPORT_LIMITS,
      );
      const result = await exportScenario(spec, to, {
        ...(platform ? { platform } : {}),
        ...(target_config !== undefined ? { targetConfig: target_config } : {}),
        ...(namespace !== undefined ? { namespace } : {}),
        ...(selector !== undefined ? { selector } : {}),
      });
      ctx.log.debug('exported a %s scenario to %s', fault, to);
      return { text: result.document, structured: result };
    },
  );
}
