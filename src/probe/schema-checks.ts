/**
 * Static checks on a tools/list answer: JSON Schema validity (ajv), provider portability
 * (what OpenAI strict mode and Gemini refuse), and instruction-like text in descriptions.
 */
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import type { JsonSchema } from './args.js';

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema?: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

let ajv: Ajv | undefined;

/**
 * ajv, loaded when a schema is first compiled: probe/index.js is imported by commands that never
 * compile one (`faultline coverage`), and loading ajv costs them ~40-60 ms of CPU.
 */
function compiler(): Ajv {
  if (ajv) return ajv;
  const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
  ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false });
  return ajv;
}

/** Compiles a schema ($schema dropped: draft-07 and 2020-12 tool schemas use the same keywords here). */
export function compileSchema(schema: unknown): { validate?: ValidateFunction; error?: string } {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return { error: 'not a JSON object' };
  const { $schema: _ignored, ...rest } = schema as JsonSchema;
  try {
    return { validate: compiler().compile(rest) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

export function schemaErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim())
    .join('; ');
}

export interface PortabilityIssue {
  leaf:
    | 'FAULT-PROVIDER-TOOL-NAME'
    | 'FAULT-PROVIDER-UNION-SCHEMA'
    | 'FAULT-PROVIDER-REF-SCHEMA'
    | 'FAULT-PROVIDER-UNSUPPORTED-KEYWORD';
  /** What is at fault: the keyword (`anyOf`, `$schema`, `type array`) or `name`. */
  keyword: string;
  /** Where in the input schema (a JSON pointer), or the name itself. */
  at: string;
  message: string;
}

const UNION_KEYS = ['anyOf', 'oneOf', 'allOf', 'not'];
const REF_KEYS = ['$ref', '$defs', 'definitions'];
const UNSUPPORTED_KEYS = ['format', 'default', '$schema', 'patternProperties', 'exclusiveMinimum', 'exclusiveMaximum'];

/** What a provider would refuse in one tool's name and input schema. */
export function portabilityIssues(tool: ListedTool): PortabilityIssue[] {
  const issues: PortabilityIssue[] = [];
  if (tool.name.length > 64 || !/^[A-Za-z0-9_-]+$/.test(tool.name)) {
    issues.push({
      leaf: 'FAULT-PROVIDER-TOOL-NAME',
      keyword: 'name',
      at: tool.name,
      message:
        `tool name ${JSON.stringify(tool.name.slice(0, 80))} (${tool.name.length} ` +
        `chars) is over 64 characters or outside [A-Za-z0-9_-]`,
    });
  }
  const walk = (node: unknown, path: string): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, `${path}/${i}`));
      return;
    }
    const schema = node as JsonSchema;
    const at = path || '/';
    for (const key of Object.keys(schema)) {
      const leaf = UNION_KEYS.includes(key)
        ? 'FAULT-PROVIDER-UNION-SCHEMA'
        : REF_KEYS.includes(key)
          ? 'FAULT-PROVIDER-REF-SCHEMA'
          : UNSUPPORTED_KEYS.includes(key)
            ? 'FAULT-PROVIDER-UNSUPPORTED-KEYWORD'
            : undefined;
      if (leaf) issues.push({ leaf, keyword: key, at, message: `${tool.name}: ${key} at ${at}` });
    }
    if (Array.isArray(schema.type))
      issues.push({
        leaf: 'FAULT-PROVIDER-UNION-SCHEMA',
        keyword: 'type array',
        at,
        message: `${tool.name}: type array ${JSON.stringify(schema.type)} at ${at}`,
      });
    // Recurse only into places that hold schemas, so that a property *named* "format" is not flagged.
    if (schema.properties && typeof schema.properties === 'object') {
      for (const [name, sub] of Object.entries(schema.properties as Record<string, unknown>))
        walk(sub, `${path}/properties/${name}`);
    }
    for (const key of ['items', 'additionalProperties', ...UNION_KEYS])
      if (key in schema && typeof schema[key] === 'object') walk(schema[key], `${path}/${key}`);
    for (const key of ['$defs', 'definitions']) {
      if (schema[key] && typeof schema[key] === 'object')
        for (const [name, sub] of Object.entries(schema[key] as Record<string, unknown>))
          walk(sub, `${path}/${key}/${name}`);
    }
  };
  walk(tool.inputSchema, '');
  return issues;
}

/** Text in a description that addresses the model rather than describing the tool. */
const INSTRUCTION_PATTERNS: RegExp[] = [
  /\bignore (?:all |any |the )?(?:previous|prior|above|earlier|other) (?:instructions|prompts?|rules)/i,
  /<\s*(?:important|system|instructions?|secret)\s*>/i,
  /\bdo not (?:tell|inform|mention|reveal|show)[^.]{0,40}\buser\b/i,
  /\b(?:system prompt|developer message)\b/i,
  /\bbefore (?:using|calling) (?:this|any) tool[^.]{0,80}\b(?:read|send|upload|include|pass)\b/i,
  /\b(?:~\/\.ssh|id_rsa|\.env\b|api[_ -]?keys?\b)[^.]{0,60}\b(?:read|send|include|pass|upload)\b/i,
  /\byou (?:must|should) (?:always |now )?(?:call|use|send|execute)\b[^.]{0,60}\b(?:instead|first|other)\b/i,
];

export function instructionLikeText(text: string): string | undefined {
  for (const pattern of INSTRUCTION_PATTERNS) {
    const match = pattern.exec(text);
    if (match) return match[0];
  }
  return undefined;
}

/** Every description in a tool: its own and its input properties'. */
export function descriptionsOf(tool: ListedTool): Array<{ where: string; text: string }> {
  const out = [{ where: `${tool.name} description`, text: tool.description ?? '' }];
  const props = (tool.inputSchema?.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, prop] of Object.entries(props)) {
    if (typeof prop?.description === 'string')
      out.push({ where: `${tool.name}.${name} description`, text: prop.description });
  }
  return out;
}
