/**
 * The deep analysis's concerns and severities, listed by its tool's schema: a leaf module, so the
 * MCP server can describe that tool without loading the LLM clients and the diff library.
 */

export const CONCERNS = ['performance', 'reliability', 'threat'] as const;
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
