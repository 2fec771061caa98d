/** Every tool family, registered in the order tools/list shows them. */
import type { ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';
import { registerCodeTools } from './code.js';
import { registerReviewTools } from './review.js';
import { registerSearchTools } from './search.js';
import { relatedCodeSearch } from './related-code.js';
import { registerScenarioTools } from './scenario.js';
import { registerProbeTools } from './probe.js';

export function registerAllTools(tools: ToolRegistry, ctx: ToolContext): void {
  registerCodeTools(tools, ctx);
  registerSearchTools(tools, ctx);
  registerReviewTools(tools, ctx, { searchContext: relatedCodeSearch(ctx) });
  registerScenarioTools(tools, ctx);
  registerProbeTools(tools, ctx); // toolset family: probe
}
