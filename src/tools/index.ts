/** Every tool family, registered in the order tools/list shows them. */
import type { ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';
import { registerCodeTools } from './code.js';
import { registerReviewTools } from './review.js';
import { registerSearchTools } from './search.js';
import { relatedCodeSearch } from './related-code.js';
import { registerScenarioTools } from './scenario.js';
import { registerProxyTools } from './proxy.js';
import { registerHttpScenarioTool } from './http-scenario.js';

export function registerAllTools(tools: ToolRegistry, ctx: ToolContext): void {
  registerCodeTools(tools, ctx);
  registerSearchTools(tools, ctx);
  registerReviewTools(tools, ctx, { searchContext: relatedCodeSearch(ctx) });
  registerScenarioTools(tools, ctx);
  registerHttpScenarioTool(tools, ctx); // family: http (fault_run_http_error_impact_scenario)
  registerProxyTools(tools, ctx); // family: proxy (fault_proxy_start, _set_faults, _status, _stop)
}
