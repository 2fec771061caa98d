/**
 * Toolset `fis-recommender` (off unless named: `--toolsets fis-recommender`): fis-recommender-mcp's
 * two tools under their own names and shapes, so its users switch without rewriting a call —
 * recommend_fis_experiments({finding}) and create_fis_template({recommendation, target_config}),
 * on faultline's recommender and validated templates (src/cloud/fis-recommender.ts). Nothing calls
 * AWS: create_fis_template returns the template to create, where fis-recommender created it.
 *
 * The structured arguments are objects in the schemas; JSON text for them is accepted too.
 */
import * as z from 'zod';
import { readJson } from '../jsonrpc/message.js';
import { LOCAL_READ_ONLY, type ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';
import { InputError } from '../kernel/errors.js';

/** JSON text for an object argument becomes the object; anything else is left for the schema to refuse. */
function objectFromText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const reading = readJson(value.trim(), { maxChars: 65_536, maxDepth: 32 });
  return reading.ok && reading.value !== null && typeof reading.value === 'object' ? reading.value : value;
}

/**
 * As objectFromText; text that is not a JSON object is the finding's summary. (Maps such as tags
 * or parameters are not declared in the schemas: an object without named properties is what some
 * providers refuse. The objects are open, so they pass, and the template builder checks them.)
 */
function findingFromText(value: unknown): unknown {
  const read = objectFromText(value);
  return typeof read === 'string' ? { summary: read } : read;
}

const finding = z
  .preprocess(
    findingFromText,
    z.looseObject({
      id: z.string().optional().describe('Echoed as finding_id'),
      summary: z.string().optional().describe('What happened, e.g. "Network latency caused timeouts"'),
      type: z.string().optional().describe('e.g. AVAILABILITY_ISSUE'),
      description: z.string().optional(),
    }),
  )
  .describe('The finding {id, summary, type, description} (any other fields are read too); at most 10 KB');

const recommendation = z
  .preprocess(
    objectFromText,
    z.looseObject({
      action: z.string().describe('FIS action id, e.g. aws:ec2:stop-instances'),
      duration: z.string().optional().describe('ISO 8601, e.g. PT3M'),
      description: z.string().optional(),
    }),
  )
  .describe(
    'One recommendation as recommend_fis_experiments returns it (its ' +
      'parameters included), or {action, duration, description, ' +
      'parameters?}',
  );

const selection = {
  roleArn: z.string().optional().describe('The IAM role FIS assumes, arn:aws:iam::<account>:role/<name>'),
  resourceType: z.string().optional().describe("Checked against the action's own, e.g. aws:ec2:instance"),
  selectionMode: z.string().optional().describe('COUNT(n) (default COUNT(1)), PERCENT(n) or ALL'),
  stopConditionArn: z
    .string()
    .optional()
    .describe('The CloudWatch alarm that stops the experiment (a placeholder when left out)'),
};

const targetConfig = (what: string) =>
  z
    .preprocess(objectFromText, z.looseObject(selection))
    .optional()
    .describe(
      `${what}{roleArn, tags: {name: value} | resourceArns | ` +
        `parameters, resourceType?, selectionMode?, stopConditionArn?}`,
    );

const recommendationOutput = z.object({
  action: z.string(),
  duration: z.string().nullable().describe('ISO 8601; null for an action that acts once'),
  description: z.string(),
  targets: z.array(z.string()).describe('Resource types the action targets'),
  stopConditions: z.array(z.string()),
  parameters: z.record(z.string(), z.string()),
  parametersToSet: z.array(z.string()).describe('Required parameters still to set'),
  confidence: z.number(),
});

export function registerFisRecommenderTools(tools: ToolRegistry, _ctx: ToolContext): void {
  tools.register(
    {
      name: 'recommend_fis_experiments',
      toolset: 'fis-recommender',
      title: 'Recommend FIS experiments for a finding (fis-recommender-mcp)',
      description:
        "fis-recommender-mcp's tool: AWS FIS experiments that reproduce a finding, ranked; offline, no LLM, no AWS. " +
        'Each: action, duration, description, targets, stopConditions, ' +
        'parameters (SSM documents included), parametersToSet, ' +
        'confidence. ' +
        'A finding that names no platform gets one action per plausible platform (notes says so). Text: the same JSON.',
      input: { finding },
      output: {
        recommendations: z.array(recommendationOutput),
        finding_id: z.string().nullable(),
        count: z.number(),
        notes: z.array(z.string()),
      },
      annotations: LOCAL_READ_ONLY,
    },
    async (args) => {
      const { recommendForSeed } = await import('../cloud/index.js');
      const result = recommendForSeed(args.finding);
      return { text: JSON.stringify(result), structured: result };
    },
  );

  tools.register(
    {
      name: 'create_fis_template',
      toolset: 'fis-recommender',
      title: 'Create an FIS experiment template (fis-recommender-mcp)',
      description:
        "fis-recommender-mcp's tool: a complete FIS " +
        'CreateExperimentTemplate input for a recommendation, checked ' +
        'against the FIS action ' +
        "catalog (the action's own target key and resource type, its " +
        'parameters and duration range). Does not call AWS: create it ' +
        'with ' +
        '`aws fis create-experiment-template --cli-input-json`. Text: JSON {template, warnings}.',
      input: {
        recommendation,
        target_config: targetConfig(''),
        target: targetConfig("fis-recommender's server.py name for target_config: "),
      },
      output: {
        template: z.record(z.string(), z.unknown()).describe('The CreateExperimentTemplate input'),
        warnings: z.array(z.string()).describe('What to check or replace before creating it'),
      },
      annotations: LOCAL_READ_ONLY,
    },
    async (args) => {
      if (args.target_config !== undefined && args.target !== undefined)
        throw new InputError('target: give target_config or target (the same thing), not both');
      const config = args.target_config ?? args.target;
      if (config === undefined)
        throw new InputError(
          'target_config: required: {roleArn, tags, resourceType?, selectionMode?, stopConditionArn?}',
        );
      const { templateForSeed } = await import('../cloud/index.js');
      const built = templateForSeed(args.recommendation, config);
      const result = { template: built.template as unknown as Record<string, unknown>, warnings: built.warnings };
      return { text: JSON.stringify(result), structured: result };
    },
  );
}
