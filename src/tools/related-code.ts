/**
 * Retrieval for the suggest tools: the function under review is the query (not the whole prompt,
 * as fault embedded), over every tree indexed with fault_index_source_code that the server may
 * read. Without an index there is simply no related code; a failing search is logged and the
 * suggestion goes ahead without context rather than failing. src/index loads on the first search.
 */
import type { SearchContext } from '../llm/index.js';
import { messageOf } from '../kernel/errors.js';
import type { ToolContext } from './context.js';

const RELATED_CHUNKS = 5;

export function relatedCodeSearch(ctx: ToolContext): SearchContext {
  return async (query, signal) => {
    try {
      const { indexSettingsFrom, searchIndex } = await import('../search/index.js');
      const hits = await searchIndex(indexSettingsFrom(ctx.config), {
        query,
        signal,
        limit: RELATED_CHUNKS,
        acceptTree: (tree) =>
          ctx.access.resolveDirectory(tree, 'source_dir').then(
            () => true,
            () => false,
          ),
      });
      return hits.map((hit) => ({ path: hit.path, startLine: hit.startLine, endLine: hit.endLine, text: hit.code }));
    } catch (error) {
      if (signal?.aborted) throw error;
      ctx.log.warn('related-code search failed, suggesting without context: %s', messageOf(error));
      return [];
    }
  };
}
