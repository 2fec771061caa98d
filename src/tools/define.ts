/**
 * How a tool is declared: one definition (name, title, description, zod input and output shapes,
 * all four annotations) and one handler that returns `{text, structured}` or throws.
 *
 * The registry wraps every handler so that
 * - its arguments are read as arguments.ts says (`""` means the default, numeric strings are
 *   numbers, structured arguments may be JSON text) and validated, every problem an `isError`
 *   naming the argument;
 * - an InputError becomes an `isError` result with its message (and no structuredContent,
 *   which strict clients would validate against the outputSchema even on error);
 * - a cancelled call answers "cancelled" (the SDK drops it anyway) and never crashes anything;
 * - any other error becomes an `isError` result naming the tool, and is logged with its stack;
 * - an argument the tool does not know is refused by name (a typo such as `num_client` would
 *   otherwise be dropped silently and the call would run on defaults), unless the definition
 *   lists it as ignored (fault's scenario tools shared one parameter set, so its users' scripts may
 *   send another fault's fields).
 *
 * It also serves `tools/list` itself, so the JSON Schemas it publishes are exactly the ones the
 * snapshot test and the schema lint see: the SDK's converter adds a `$schema` keyword that
 * Gemini rejects, so it is stripped here, in one place.
 */
import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { CancelledError, InputError, isOperational, messageOf } from '../kernel/errors.js';
import { FORBIDDEN_KEYS } from '../config-reader.js';
import { ArgumentReader, type SchemaNode } from './arguments.js';
import { withProductionHint } from '../production.js';
import type { Logger } from '../log.js';
import { TOOLSETS, type Toolset } from '../config.js';

export interface ToolAnnotationsExplicit {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Reads local files or computes locally: safe to auto-approve. */
export const LOCAL_READ_ONLY: ToolAnnotationsExplicit = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

export interface ToolDefinition<I extends z.ZodRawShape, O extends z.ZodRawShape> {
  /** snake_case, at most 64 characters (MCP clients prefix it with the server's name). */
  name: string;
  /** The family `--toolsets` selects it by; required so that an untagged tool fails the build. */
  toolset: Toolset;
  title: string;
  /** Says when to use the tool, its units and defaults, and whether it needs an LLM. */
  description: string;
  input: I;
  output: O;
  /**
   * The output schema outlines the result: the properties listed are typed, and the result may
   * carry more (every figure of a report), which the schema leaves open rather than spelling out
   * in every tools/list.
   */
  outline?: boolean;
  annotations: ToolAnnotationsExplicit;
  /** Arguments accepted for compatibility and ignored; the handler is told which were given. */
  ignoredArguments?: readonly string[];
}

/** What a handler gets besides its arguments. */
export interface ToolCall {
  /** Aborts when the client cancels the request or disconnects. */
  signal: AbortSignal;
  /**
   * Reports progress when the client asked for it (sent a progressToken); a no-op otherwise.
   * `progress` must increase from call to call.
   */
  progress(progress: number, total?: number, message?: string): void;
  /** The ignored arguments (see ToolDefinition.ignoredArguments) this call carried. */
  ignoredArguments: string[];
  /**
   * Asks the client's person (MCP elicitation) and answers their action; present only when the
   * client declared the elicitation capability. Rejects when the signal aborts or the client errs.
   */
  ask?: (message: string, signal: AbortSignal) => Promise<'accept' | 'decline' | 'cancel'>;
}

export interface ToolOutcome<S> {
  /** The text content: the legacy shape scripts parse (docs/design.md, "2. The MCP surface"). */
  text: string;
  /** The structuredContent, of the output shape (typed here; not re-validated before it is sent). */
  structured: S;
}

export type ToolHandler<I extends z.ZodRawShape, O extends z.ZodRawShape> = (
  args: z.infer<z.ZodObject<I>>,
  call: ToolCall,
) => Promise<ToolOutcome<z.infer<z.ZodObject<O>>>>;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Tools listed before they are registered (see ToolRegistry.serveToolList). */
export interface DeferredTools {
  /** What tools/list answers, in order, already limited to the enabled toolsets. */
  list: Tool[] | Promise<Tool[]>;
  /** Registers the family of the tool `name` (once; later calls resolve at once). */
  prepare(name: string): Promise<void>;
}

export class ToolRegistry {
  /** The tools in registration order, with the zod objects their published schemas come from. */
  private readonly registered: Array<{
    toolset: Toolset;
    tool: Pick<Tool, 'name' | 'title' | 'description' | 'annotations'>;
    input: z.ZodObject;
    output: z.ZodObject;
  }> = [];
  /** What tools/list publishes, converted once (see publish()). */
  private published: Tool[] | undefined;
  /** Each tool's inputSchema in the list generated at build time, when served from it (see serveToolList()). */
  private readonly listedInputs = new Map<string, SchemaNode>();
  /**
   * Runs before every tool handler, e.g. to fetch the client's roots over the call's own stream
   * (server.ts); a failure is logged and the call goes on.
   */
  beforeCall?: (extra: Extra) => Promise<void>;

  private readonly enabled: ReadonlySet<Toolset>;
  /** One zod object per output shape, so the tools sharing one (the six scenario tools) share it. */
  private readonly outputs = new WeakMap<z.ZodRawShape, z.ZodObject>();

  constructor(
    private readonly server: McpServer,
    private readonly log: Logger,
    /** The families offered (--toolsets); a tool of another family is not registered at all. */
    toolsets: readonly Toolset[] = TOOLSETS,
  ) {
    this.enabled = new Set(toolsets);
  }

  register<I extends z.ZodRawShape, O extends z.ZodRawShape>(
    definition: ToolDefinition<I, O>,
    handler: ToolHandler<I, O>,
  ): void {
    if (!this.enabled.has(definition.toolset)) return;
    const inputSchema = z.object(definition.input);
    // The SDK only checks that the arguments are an object: they are read and validated below
    // (arguments.ts), where `""` means a default and JSON text may stand for an object, and every
    // refusal names its argument. The published schema is the plain object (see publish()).
    const acceptingSchema = z.looseObject({});
    const outputSchema = this.outputFor(definition.output, definition.outline === true);
    const known = new Set(Object.keys(definition.input));
    const ignorable = new Set(definition.ignoredArguments ?? []);
    // Built on the first call: it converts the schema, which start-up must not pay for.
    let reader: ArgumentReader | undefined;
    this.registered.push({
      toolset: definition.toolset,
      tool: {
        name: definition.name,
        title: definition.title,
        description: definition.description,
        // The title is the tool's own (tools/list shows it once; annotations.title is its older spelling).
        annotations: { ...definition.annotations },
      },
      input: inputSchema,
      output: outputSchema,
    });
    this.published = undefined;
    const run = async (args: unknown, extra: Extra): Promise<CallToolResult> => {
      const started = performance.now();
      try {
        const given = (args ?? {}) as Record<string, unknown>;
        const forbidden = Object.keys(given).find((key) => FORBIDDEN_KEYS.has(key));
        if (forbidden !== undefined) throw new InputError(forbiddenArgumentMessage(forbidden));
        const unknown = Object.keys(given).filter((key) => !known.has(key) && !ignorable.has(key));
        if (unknown.length > 0) {
          throw new InputError(
            `unknown argument${unknown.length > 1 ? 's' : ''} ${unknown
              .slice(0, 10)
              .map((key) => JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key))
              .join(', ')}; ` + `${definition.name} accepts: ${[...known].join(', ')}`,
          );
        }
        const ignored = Object.keys(given).filter((key) => ignorable.has(key) && !known.has(key));
        reader ??= new ArgumentReader(definition.input, this.listedInputs.get(definition.name));
        const accepted = await reader.read(Object.fromEntries(Object.entries(given).filter(([key]) => known.has(key))));
        if (this.beforeCall)
          await this.beforeCall(extra).catch((error: unknown) =>
            this.log.warn('before %s: %s', definition.name, messageOf(error)),
          );
        const call = toolCall(
          extra,
          this.log,
          ignored,
          this.server.server.getClientCapabilities()?.elicitation !== undefined,
        );
        const outcome = await handler(accepted as z.infer<z.ZodObject<I>>, call);
        this.log.debug('%s answered in %d ms', definition.name, Math.round(performance.now() - started));
        return {
          content: [{ type: 'text', text: outcome.text }],
          structuredContent: outcome.structured as Record<string, unknown>,
        };
      } catch (error) {
        return this.failure(definition.name, error, extra.signal);
      }
    };
    this.server.registerTool(
      definition.name,
      {
        title: definition.title,
        description: definition.description,
        inputSchema: acceptingSchema,
        // No outputSchema here: tools/list publishes ours (serveToolList), and given one the SDK re-parses every
        // structuredContent we built with zod before sending it (2-3 ms of a 500-function listing, and a copy of it).
        // The handler's type holds the shape; the test clients check every result against the published schema.
        annotations: { title: definition.title, ...definition.annotations },
      },
      run as never,
    );
  }

  private outputFor(shape: z.ZodRawShape, open: boolean): z.ZodObject {
    let schema = this.outputs.get(shape);
    if (!schema) {
      schema = open ? z.looseObject(shape) : z.object(shape);
      this.outputs.set(shape, schema);
    }
    return schema;
  }

  /** Every registered tool as `tools/list` publishes it. */
  tools(): Tool[] {
    this.published ??= this.publish();
    return this.published.map((tool) => structuredClone(tool));
  }

  /** The names of the tools registered so far, in order. */
  names(): string[] {
    return this.registered.map(({ tool }) => tool.name);
  }

  /** Every registered tool as `tools/list` publishes it, with its toolset (for the generated list). */
  listed(): Array<{ toolset: Toolset; tool: Tool }> {
    const tools = this.tools();
    return tools.map((tool, index) => ({ toolset: this.registered[index]!.toolset, tool }));
  }

  /**
   * Converts every tool's schemas to JSON Schema: all inputs in one call and all outputs in
   * another, through a zod registry, so a field schema several tools share (the scenario tools'
   * twenty common arguments) is converted once rather than once per tool. The result is the same
   * as converting each tool alone (the snapshot test holds it); the conversion is most of the
   * cost of building the server, and start-up is on every MCP client's critical path.
   */
  private publish(): Tool[] {
    const inputs = z.registry<{ id: string }>();
    const outputs = z.registry<{ id: string }>();
    const outputIds = new Map<z.ZodObject, string>();
    this.registered.forEach(({ input, output }, index) => {
      inputs.add(input, { id: String(index) });
      if (!outputIds.has(output)) {
        outputIds.set(output, String(outputIds.size));
        outputs.add(output, { id: outputIds.get(output)! });
      }
    });
    const publishedInputs = publishedSchemas(inputs, 'input');
    const publishedOutputs = publishedSchemas(outputs, 'output');
    // Keys in the order tools/list has always shown them.
    return this.registered.map(({ tool, output }, index) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: publishedInputs[String(index)] as Tool['inputSchema'],
      outputSchema: publishedOutputs[outputIds.get(output)!] as Tool['outputSchema'],
      annotations: tool.annotations,
    }));
  }

  /**
   * Makes `tools/list` answer from this registry (call once, before connecting).
   *
   * Without `deferred`, every tool is registered already and the list is converted now (a schema
   * zod cannot convert fails the start). With it, tools/list answers `deferred.list` (the list
   * generated at build time, or a live one still being built) and a tool's family is registered by
   * `deferred.prepare(name)` just before the call runs.
   */
  serveToolList(deferred?: DeferredTools): void {
    if (!deferred) this.published ??= this.publish();
    // A generated list holds each tool's input schema converted at build time: its readers take it from there.
    if (deferred && Array.isArray(deferred.list))
      for (const tool of deferred.list) this.listedInputs.set(tool.name, tool.inputSchema as SchemaNode);
    const list = deferred ? async () => (await deferred.list).map((tool) => structuredClone(tool)) : () => this.tools();
    this.server.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await list() }));
    // The tool list never changes after start: advertise that (the SDK sets listChanged: true
    // when the first tool is registered, and never sends the notification).
    this.server.server.registerCapabilities({ tools: { listChanged: false } });
    // Nor does registering a deferred family after connect() change it: every tool it adds was
    // listed from the start, so the SDK must not announce list_changed.
    this.server.sendToolListChanged = () => undefined;
    this.guardCallArguments(deferred);
  }

  /**
   * `tools/call` with non-object `arguments` (an array, a string, null…) fails the SDK's request
   * schema, which answers -32603 with a raw validation dump; answer -32602 naming `arguments`.
   * The SDK keeps its handlers in a private map: this wraps the one it installed for tools/call.
   */
  private guardCallArguments(deferred?: DeferredTools): void {
    const handlers = (
      this.server.server as unknown as {
        _requestHandlers?: Map<string, (request: unknown, extra: unknown) => Promise<unknown>>;
      }
    )._requestHandlers;
    const inner = handlers?.get('tools/call');
    if (!handlers || !inner) {
      // Without the wrap, deferred tools would never be registered: refuse to start instead.
      if (deferred)
        throw new Error("the SDK's tools/call handler was not found: cannot register tools on their first call");
      return;
    }
    handlers.set('tools/call', (request, extra) => {
      const params = (request as { params?: unknown }).params;
      if (params === null || typeof params !== 'object' || Array.isArray(params)) {
        return Promise.reject(
          new McpError(ErrorCode.InvalidParams, 'params: must be an object with name and arguments'),
        );
      }
      const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
      if (typeof name !== 'string')
        return Promise.reject(new McpError(ErrorCode.InvalidParams, 'name: must be the name of a tool (a string)'));
      if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
        const kind = args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`;
        return Promise.reject(
          new McpError(ErrorCode.InvalidParams, `arguments: must be an object of named arguments, not ${kind}`),
        );
      }
      // Checked here, on the arguments as parsed from the wire: the SDK's request schema copies
      // them into a new object, where a "__proto__" key would become the prototype and vanish.
      const forbidden = args === undefined ? undefined : Object.keys(args).find((key) => FORBIDDEN_KEYS.has(key));
      if (forbidden !== undefined) {
        return Promise.resolve({
          content: [{ type: 'text', text: forbiddenArgumentMessage(forbidden) }],
          isError: true,
        } satisfies CallToolResult);
      }
      if (!deferred) return inner(request, extra);
      return deferred.prepare(name).then(
        () => inner(request, extra),
        (error: unknown): CallToolResult => {
          this.log.error(
            '%s: its tool module failed to load: %s',
            name,
            error instanceof Error ? (error.stack ?? error.message) : messageOf(error),
          );
          return {
            content: [{ type: 'text', text: `${name} failed: its tool module failed to load (${messageOf(error)})` }],
            isError: true,
          };
        },
      );
    });
  }

  private failure(name: string, error: unknown, signal: AbortSignal): CallToolResult {
    let text: string;
    if (error instanceof InputError) {
      // A production refusal comes from where faults are injected; how to allow it is the server's.
      text = messageOf(
        withProductionHint(error, 'set FAULTLINE_ALLOW_PRODUCTION=1 (or --allow-production) on the server'),
      );
    } else if (error instanceof CancelledError || signal.aborted) {
      text = `${name} was cancelled`;
    } else if (isOperational(error)) {
      this.log.warn('%s failed: %s', name, messageOf(error));
      text = `${name} failed: ${messageOf(error)}`;
    } else {
      this.log.error(
        '%s failed unexpectedly: %s',
        name,
        error instanceof Error ? (error.stack ?? error.message) : messageOf(error),
      );
      text = `${name} failed: ${messageOf(error)}`;
    }
    return { content: [{ type: 'text', text }], isError: true };
  }
}

function forbiddenArgumentMessage(key: string): string {
  return `${key}: not accepted as an argument name (${[...FORBIDDEN_KEYS].join(', ')} never are)`;
}

/** The JSON Schema of every schema in `registry`, by id, as tools/list publishes them. */
function publishedSchemas(
  registry: z.core.$ZodRegistry<{ id: string }>,
  io: 'input' | 'output',
): Record<string, Record<string, unknown>> {
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-7', io });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, json]) => {
      const copy: Record<string, unknown> = { ...json };
      delete copy.$schema;
      return [id, compactSchema(copy, io) as Record<string, unknown>];
    }),
  );
}

const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/**
 * tools/list goes to the model with every request, so the published schemas drop what says
 * nothing, keeping exactly what they accept:
 * - `additionalProperties: {}` (the converter's spelling of "anything", the default anyway);
 * - `propertyNames: {type: "string"}` (every JSON key is a string);
 * - integer bounds that are only zod's safe-integer range;
 * - in output schemas, `anyOf: [X, {type: "null"}]` becomes X with `"null"` added to its type
 *   (input schemas keep no anyOf at all: Gemini rejects it, and the lint checks that).
 */
export function compactSchema(node: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(node)) return node.map((item) => compactSchema(item, io));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === 'additionalProperties' && isEmptyObject(value)) continue;
    if (key === 'propertyNames' && isStringType(value)) continue;
    if ((key === 'maximum' || key === 'minimum') && SAFE_INTEGER_BOUNDS.has(value as number)) continue;
    out[key] =
      key === 'properties'
        ? mapValues(value as Record<string, unknown>, (child) => compactSchema(child, io))
        : compactSchema(value, io);
  }
  const anyOf = out.anyOf;
  if (io === 'output' && Array.isArray(anyOf) && anyOf.length === 2) {
    const nullIndex = anyOf.findIndex((branch) => isNullType(branch));
    const other = anyOf[1 - nullIndex] as Record<string, unknown> | undefined;
    if (nullIndex !== -1 && other && typeof other.type === 'string' && other.anyOf === undefined) {
      delete out.anyOf;
      return { ...other, ...out, type: [other.type, 'null'] };
    }
  }
  return out;
}

function mapValues(record: Record<string, unknown>, map: (value: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}

function isEmptyObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;
}

function isStringType(value: unknown): boolean {
  return JSON.stringify(value) === '{"type":"string"}';
}

function isNullType(value: unknown): boolean {
  return JSON.stringify(value) === '{"type":"null"}';
}

function toolCall(extra: Extra, log: Logger, ignoredArguments: string[], canAsk: boolean): ToolCall {
  const token = extra._meta?.progressToken;
  let last = -Infinity;
  return {
    signal: extra.signal,
    ignoredArguments,
    // Over the call's own stream, as roots/list is (server.ts): over HTTP that is where the client listens.
    ...(canAsk
      ? {
          ask: async (message: string, signal: AbortSignal) => {
            const answer = await extra.sendRequest(
              {
                method: 'elicitation/create',
                params: { message, requestedSchema: { type: 'object', properties: {} } },
              },
              ElicitResultSchema,
              { signal, timeout: 2_147_483_647 },
            );
            return answer.action;
          },
        }
      : {}),
    progress(progress, total, message) {
      if (token === undefined || extra.signal.aborted || progress <= last) return;
      last = progress;
      extra
        .sendNotification({
          method: 'notifications/progress',
          params: {
            progressToken: token,
            progress,
            ...(total !== undefined ? { total } : {}),
            ...(message !== undefined ? { message } : {}),
          },
        })
        .catch((error: unknown) => log.debug('progress notification not sent: %s', messageOf(error)));
    },
  };
}
