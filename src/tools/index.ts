/** Every tool family, registered in the order tools/list shows them. */
import type { ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';
import { registerCodeTools } from './code.js';
import { registerReviewTools } from './review.js';
import { registerSearchTools } from './search.js';
import { relatedCodeSearch } from './related-code.js';
import { registerScenarioTools } from './scenario.js';
import { registerCloudTools } from './cloud.js';
import { registerToolplaneTools } from './toolplane.js';
import { registerProxyTools } from './proxy.js';
import { registerHttpScenarioTool } from './http-scenario.js';
import { registerProbeTools } from './probe.js';

export function registerAllTools(tools: ToolRegistry, ctx: ToolContext): void {
  registerCodeTools(tools, ctx);
  registerSearchTools(tools, ctx);
  registerReviewTools(tools, ctx, { searchContext: relatedCodeSearch(ctx) });
  registerScenarioTools(tools, ctx);
  registerCloudTools(tools, ctx); // family: cloud (fault_recommend_fis_experiments, fault_create_fis_template, fault_export_scenario)
  registerToolplaneTools(tools, ctx); // toolset family: toolplane
  registerHttpScenarioTool(tools, ctx); // family: http (fault_run_http_error_impact_scenario)
  registerProxyTools(tools, ctx); // family: proxy (fault_proxy_start, _set_faults, _status, _stop)
  registerProbeTools(tools, ctx); // toolset family: probe
}
