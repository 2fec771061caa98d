/**
 * createServer(config): an McpServer with every faultline tool registered, ready to be connected
 * to a transport (src/transports). One server serves one client connection.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListRootsResultSchema, RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
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
  // Work tools hold across calls (held proxies) stops when the client connection closes.
  const closers: Array<() => Promise<void> | void> = [];
  registerAllTools(tools, { config, access, log, onClose: (close) => closers.push(close) });
  mcp.server.onclose = () => {
    for (const close of closers) void Promise.resolve().then(close).catch((error: unknown) => log.warn('on close: %s', messageOf(error)));
  };
  tools.serveToolList();
  followClientRoots(mcp, tools, access, log);
  return { mcp, tools, access };
}

/**
 * Keeps FileAccess in step with the client's roots (roots/list), when the client has them.
 *
 * The roots are asked for lazily, before the first tool call (and again after
 * notifications/roots/list_changed), over that call's own stream: over streamable HTTP a request
 * sent when `initialized` arrives has no stream to travel on until the client opens one, so the
 * client could never answer it. The call waits for the answer, bounded by ROOTS_TIMEOUT_MS; a
 * client that fails to answer leaves the previous roots in force.
 */
const ROOTS_TIMEOUT_MS = 5_000;

function followClientRoots(mcp: McpServer, tools: ToolRegistry, access: FileAccess, log: Logger): void {
  let stale = true;
  let fetching: Promise<void> | undefined;
  tools.beforeCall = async (extra) => {
    if (!stale || !mcp.server.getClientCapabilities()?.roots) return;
    fetching ??= (async () => {
      try {
        const { roots } = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema, { timeout: ROOTS_TIMEOUT_MS });
        access.setClientRoots(roots.map((root) => root.uri));
        stale = false;
        log.debug('client roots: %s', roots.map((root) => root.uri).join(', ') || '(none)');
      } catch (error) {
        // Not retried on every call (each would wait the timeout): again after list_changed only.
        stale = false;
        log.warn("could not list the client roots: %s", messageOf(error));
      } finally {
        fetching = undefined;
      }
    })();
    await fetching;
  };
  mcp.server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    stale = true;
  });
}
