/**
 * The lint every published tool must pass: a title, all four annotations set explicitly, a name
 * MCP hosts accept, and input schemas that Gemini and OpenAI strict mode accept — no keyword
 * either rejects, no union; a nested object (a structured argument) declares its properties, since
 * Gemini refuses an object schema without any, and requires only properties it declares.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** Keywords Gemini's function-declaration schema rejects (or that SDK converters emit and it chokes on). */
const FORBIDDEN_INPUT_KEYWORDS = [
  '$schema',
  '$ref',
  '$defs',
  'definitions',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'format',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'default',
  'const',
  'patternProperties',
  'propertyNames',
];
const FORBIDDEN_OUTPUT_KEYWORDS = ['$schema', '$ref', '$defs', 'definitions'];
const ANNOTATIONS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
export const MAX_DESCRIPTION_CHARS = 1500;

export function lintTool(tool: Tool): string[] {
  const problems: string[] = [];
  const where = (what: string) => `${tool.name}: ${what}`;
  if (tool.name.length > 64) problems.push(where(`name is ${tool.name.length} characters; at most 64`));
  if (!/^[A-Za-z0-9_.-]+$/.test(tool.name)) problems.push(where('name has characters outside [A-Za-z0-9_.-]'));
  if (!tool.title) problems.push(where('no title'));
  if (!tool.description) problems.push(where('no description'));
  else if (tool.description.length > MAX_DESCRIPTION_CHARS) {
    problems.push(where(`description is ${tool.description.length} characters; at most ${MAX_DESCRIPTION_CHARS}`));
  }
  for (const hint of ANNOTATIONS) {
    if (typeof tool.annotations?.[hint] !== 'boolean') problems.push(where(`annotation ${hint} is not set explicitly`));
  }
  if (!tool.outputSchema) problems.push(where('no outputSchema'));
  walk(tool.inputSchema, 'inputSchema', (path, key, value) => {
    if (FORBIDDEN_INPUT_KEYWORDS.includes(key)) problems.push(where(`${path} uses "${key}"`));
    if (key === 'additionalProperties' && typeof value === 'object')
      problems.push(where(`${path} has additionalProperties with a schema`));
    if (key === 'type' && Array.isArray(value))
      problems.push(where(`${path} has a union type ${JSON.stringify(value)}`));
  });
  eachSchema(tool.inputSchema, 'inputSchema', (path, node) => {
    if (node.type === 'object') {
      const names = Object.keys(node.properties ?? {});
      if (names.length === 0) problems.push(where(`${path} is an object without properties (Gemini refuses it)`));
      for (const name of node.required ?? [])
        if (!names.includes(name)) problems.push(where(`${path} requires "${name}", which it does not declare`));
    }
    if (node.type === 'array' && node.items === undefined) problems.push(where(`${path} is an array without items`));
  });
  if (tool.outputSchema) {
    walk(tool.outputSchema, 'outputSchema', (path, key) => {
      if (FORBIDDEN_OUTPUT_KEYWORDS.includes(key)) problems.push(where(`${path} uses "${key}"`));
    });
  }
  return problems;
}

interface SchemaNode {
  type?: unknown;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
}

/** Every schema node under `node` (itself, its properties, its items), with its path. */
function eachSchema(node: SchemaNode, path: string, visit: (path: string, node: SchemaNode) => void): void {
  visit(path, node);
  for (const [name, child] of Object.entries(node.properties ?? {}))
    eachSchema(child, `${path}.properties.${name}`, visit);
  if (node.items && typeof node.items === 'object') eachSchema(node.items, `${path}.items`, visit);
}

function walk(node: unknown, path: string, visit: (path: string, key: string, value: unknown) => void): void {
  if (Array.isArray(node)) {
    node.forEach((child, index) => walk(child, `${path}[${index}]`, visit));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    // Inside "properties" the keys are argument names, not keywords.
    if (path.endsWith('.properties')) {
      walk(value, `${path}.${key}`, visit);
      continue;
    }
    visit(path, key, value);
    walk(value, `${path}.${key}`, visit);
  }
}
