/**
 * PROVIDER — model-provider integration: what the model providers an agent host forwards tools to
 * would refuse in the tool surface as served. A name outside OpenAI's and Anthropic's function-name
 * rule keeps the tool from every such host (a failure); schema keywords some providers refuse are
 * portability risks (warnings), one finding per keyword listing every tool that has it.
 */
import { portabilityIssues, type PortabilityIssue } from '../schema-checks.js';
import type { ProbeCheck } from './check.js';

const NAME = 'FAULT-PROVIDER-TOOL-NAME';
const LEAVES = [
  NAME,
  'FAULT-PROVIDER-UNION-SCHEMA',
  'FAULT-PROVIDER-REF-SCHEMA',
  'FAULT-PROVIDER-UNSUPPORTED-KEYWORD',
] as const;

/** Who refuses a keyword, and where it usually comes from. */
const WHY: Record<string, string> = {
  name: 'OpenAI and Anthropic accept function names of 1-64 characters from [A-Za-z0-9_-] only',
  $schema: "Gemini's function declarations refuse it; the MCP SDKs emit it in every tool's schema",
  default: "Gemini refuses it; zod's .default() emits it",
  format: 'Gemini and OpenAI strict mode accept only a few formats',
  exclusiveMinimum: "Gemini refuses it; zod's .positive() emits it",
  exclusiveMaximum: "Gemini refuses it; zod's .lt() emits it",
  patternProperties: 'Gemini and OpenAI strict mode refuse it',
  $ref: 'several providers do not resolve references in function parameters',
  $defs: 'several providers do not resolve references in function parameters',
  definitions: 'several providers do not resolve references in function parameters',
};
const UNION_WHY = 'Gemini and OpenAI strict mode refuse or rewrite unions';

function message(issue: PortabilityIssue): string {
  if (issue.leaf === NAME)
    return (
      `a tool name over 64 characters or outside [A-Za-z0-9_-] (first: ` +
      `${JSON.stringify(issue.at.slice(0, 80))}): ${WHY.name}`
    );
  return `${issue.keyword} in the input schema (first at ${issue.at}): ${WHY[issue.keyword] ?? UNION_WHY}`;
}

export const portabilityCheck: ProbeCheck = {
  id: 'provider-portability',
  family: 'PROVIDER',
  leaves: {
    [NAME]: 'failure',
    'FAULT-PROVIDER-UNION-SCHEMA': 'warning',
    'FAULT-PROVIDER-REF-SCHEMA': 'warning',
    'FAULT-PROVIDER-UNSUPPORTED-KEYWORD': 'warning',
  },
  run(ctx) {
    for (const tool of ctx.tools) {
      const issues = portabilityIssues(tool);
      for (const leaf of LEAVES) {
        const mine = issues.filter((issue) => issue.leaf === leaf);
        if (mine.length === 0) ctx.check(leaf);
        // One finding per keyword and tool (the ledger groups a keyword's tools into one finding).
        const perKeyword = new Map(mine.map((issue) => [issue.keyword, issue]));
        for (const issue of perKeyword.values()) {
          ctx.report({
            leaf,
            probe: this.id,
            tool: tool.name,
            message: message(issue),
            exchange: [{ dir: '<', text: JSON.stringify({ name: tool.name, inputSchema: tool.inputSchema }) }],
            group: issue.keyword,
          });
        }
      }
    }
  },
};
