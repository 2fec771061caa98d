/**
 * createServer(config): an McpServer offering every faultline tool, ready to be connected to a
 * transport (src/transports). One server serves one client connection.
 *
 * tools/list is answered from the list generated at build time (tools/tool-list.ts) when it matches
 * the compiled tool modules, and a tool family's module is imported and registered on the first
 * call of one of its tools; so start-up builds no zod schema and loads no tool module. When the
 * generated list is missing or stale, every family is registered at start and the list is built
 * live, as it was before. Either way the client sees the same list and the same tools.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListRootsResultSchema, RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';
import { FileAccess } from './access.js';
import { makeConfig, type Config } from './config.js';
import { messageOf } from './kernel/errors.js';
import { silentLogger, type Logger } from './log.js';
import { ToolRegistry, type DeferredTools } from './tools/define.js';
import type { ToolContext } from './tools/context.js';
import { TOOL_FAMILIES, registerAllTools } from './tools/index.js';
import { readToolList, type ListedTool, type ToolListReading } from './tools/tool-list.js';
import { VERSION } from './version.js';

const INSTRUCTIONS = `faultline: chaos-engineering and code-analysis tools.
- Read code: fault_list_function_names and fault_extract_code_block take an absolute file path.
- Judge code with an LLM: the fault_score_*, fault_suggest_* and fault_make_* tools need an LLM provider configured on the server.
- Measure impact: the fault_run_*_impact_scenario tools put a fault proxy in front of a local endpoint, drive load through it and return a markdown report; they take seconds to minutes (the duration argument).`;

export interface FaultlineServer {
  mcp: McpServer;
  /** Whether this connection holds resources across calls (held proxies). */
  holdsResources(): boolean;
  /** The tools registered so far (a family registers on its first call; see above). */
  tools: ToolRegistry;
  access: FileAccess;
}

export interface ServerDeps {
  log?: Logger;
  /** The generated tools/list, or why it is not usable (default: tools/tool-list.json, read once). */
  toolList?: ToolListReading;
}

export function createServer(config: Config = makeConfig(), deps: ServerDeps = {}): FaultlineServer {
  const log = deps.log ?? silentLogger;
  const mcp = new McpServer(
    { name: 'faultline', title: 'faultline', version: VERSION },
    {
      instructions: INSTRUCTIONS,
      capabilities: { tools: { listChanged: false } },
      jsonSchemaValidator: new OnFirstUseValidator(),
    },
  );
  const access = new FileAccess(config.roots);
  const tools = new ToolRegistry(mcp, log, config.toolsets);
  // Work tools hold across calls (held proxies) stops when the client connection closes.
  const closers: Array<() => Promise<void> | void> = [];
  const holders: Array<() => boolean> = [];
  const ctx: ToolContext = {
    config,
    access,
    log,
    onClose: (close) => closers.push(close),
    onHold: (holds) => holders.push(holds),
  };
  mcp.server.onclose = () => {
    for (const close of closers)
      void Promise.resolve()
        .then(close)
        .catch((error: unknown) => log.warn('on close: %s', messageOf(error)));
  };
  const generated = deps.toolList ?? readToolList();
  if ('tools' in generated) {
    tools.serveToolList(onFirstCall(tools, ctx, generated.tools));
  } else {
    log.debug(
      'tools/list built live: the generated list is not usable (%s; npm run build regenerates it)',
      generated.stale,
    );
    tools.serveToolList(builtLive(tools, ctx, log));
  }
  followClientRoots(mcp, tools, access, log);
  return { mcp, tools, access, holdsResources: () => holders.some((holds) => holds()) };
}

/**
 * The SDK's ajv validator, created when first used. The SDK's server builds one in its constructor
 * (an Ajv instance with its formats: 5–8 ms of every start-up) for what it never does here
 * (validating elicitation answers); the module is loaded either way.
 */
class OnFirstUseValidator implements jsonSchemaValidator {
  private ajv: AjvJsonSchemaValidator | undefined;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.ajv ??= new AjvJsonSchemaValidator();
    return this.ajv.getValidator<T>(schema);
  }
}

/**
 * tools/list from the list generated at build time (only the enabled toolsets); a family's module
 * is imported and its tools registered on the first call of one of them, so start-up loads no tool
 * module and builds no zod schema.
 */
function onFirstCall(tools: ToolRegistry, ctx: ToolContext, generated: readonly ListedTool[]): DeferredTools {
  const enabled = new Set(ctx.config.toolsets);
  const listed = generated.filter((entry) => enabled.has(entry.toolset));
  const moduleOf = new Map(listed.map((entry) => [entry.tool.name, entry.module]));
  const loading = new Map<string, Promise<void>>();
  return {
    list: listed.map((entry) => entry.tool),
    prepare(name) {
      const module = moduleOf.get(name);
      const family = TOOL_FAMILIES.find((candidate) => candidate.module === module);
      if (!family) return Promise.resolve(); // not listed: the SDK answers that it does not know it
      let registered = loading.get(family.module);
      if (!registered) {
        registered = family.load().then((register) => register(tools, ctx));
        loading.set(family.module, registered);
      }
      return registered;
    },
  };
}

/** tools/list built from every family, loaded now (the generated list is missing or stale). */
function builtLive(tools: ToolRegistry, ctx: ToolContext, log: Logger): DeferredTools {
  const registered = registerAllTools(tools, ctx);
  registered.catch((error: unknown) =>
    log.error(
      'the tools could not be registered: %s',
      error instanceof Error ? (error.stack ?? error.message) : messageOf(error),
    ),
  );
  const list = registered.then(() => tools.tools());
  list.catch(() => undefined); // answered (as an error) to each tools/list
  return { list, prepare: () => registered };
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
        const { roots } = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema, {
          timeout: ROOTS_TIMEOUT_MS,
        });
        access.setClientRoots(roots.map((root) => root.uri));
        stale = false;
        log.debug('client roots: %s', roots.map((root) => root.uri).join(', ') || '(none)');
      } catch (error) {
        // Not retried on every call (each would wait the timeout): again after list_changed only.
        stale = false;
        log.warn('could not list the client roots: %s', messageOf(error));
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
