/** The search limits, in a leaf module so the MCP server can quote them in schemas without loading the index. */
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;
/** About 8,000 tokens, the most any provider's embedding model takes in one input. */
export const MAX_QUERY_CHARS = 32_000;
