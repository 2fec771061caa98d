/**
 * createServer(config): an McpServer with every faultline tool registered, ready to be connected
 * to a transport (src/transports). One server serves one client connection.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { FileAccess } from './access.js';
import { makeConfig, type Config } from './config.js';
import { messageOf } from './errors.js';
import { silentLogger, type Logger } from './log.js';
import { ToolRegistry } from './tools/define.js';
import { registerAllTools } from './tools/index.js';
import { VERSION } from './version.js';

const INSTRUCTIONS = `faultline: chaos-engineering and code-analysis tools.
- Read code: fault_list_function_names and fault_extract_code_block take an absolute file path.
- Judge code with an LLM: the fault_score_*, fault_suggest_* and fault_make_* tools need an LLM provider configured on the server.
- Measure impact: the fault_run_*_impact_scenario tools put a fault proxy in front of a local endpoint, drive load through it and return a markdown report; they take seconds to minutes (the duration argument).`;

export interface FaultlineServer {
  mcp: McpServer;
  tools: ToolRegistry;
  access: FileAccess;
}

export interface ServerDeps {
  log?: Logger;
}

export function createServer(config: Config = makeConfig(), deps: ServerDeps = {}): FaultlineServer {
  const log = deps.log ?? silentLogger;
  const mcp = new McpServer(
    { name: 'faultline', title: 'faultline', version: VERSION },
    { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: false } } },
  );
  const access = new FileAccess(config.roots);
  const tools = new ToolRegistry(mcp, log, config.toolsets);
  registerAllTools(tools, { config, access, log });
  tools.serveToolList();
  followClientRoots(mcp, access, log);
  return { mcp, tools, access };
}

/**
 * Keeps FileAccess in step with the client's roots (roots/list), when the client has them.
 * A client that fails to answer leaves the previous roots in force.
 */
function followClientRoots(mcp: McpServer, access: FileAccess, log: Logger): void {
  const refresh = async (): Promise<void> => {
    if (!mcp.server.getClientCapabilities()?.roots) return;
    try {
      const { roots } = await mcp.server.listRoots(undefined, { timeout: 10_000 });
      access.setClientRoots(roots.map((root) => root.uri));
      log.debug('client roots: %s', roots.map((root) => root.uri).join(', ') || '(none)');
    } catch (error) {
      log.warn('could not list the client roots: %s', messageOf(error));
    }
  };
  mcp.server.oninitialized = () => void refresh();
  mcp.server.setNotificationHandler(RootsListChangedNotificationSchema, () => void refresh());
}
