/**
 * A tool-call chaos scenario, end to end: the target MCP server behind the proxy (spawned over
 * stdio, or an HTTP endpoint behind the HTTP proxy), the official SDK client replaying `calls`
 * once per task (each task marked in `_meta`), optionally with resilience (2 retries of a failed
 * call), then the SLIs and the report. The child process never outlives the run: it is reaped on
 * success, failure and cancellation.
 */
import type { LookupFunction } from 'node:net';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CancelledError, InputError } from '../kernel/errors.js';
import { renderReport, type CallRecord, type Slis } from './metrics.js';
import type { Plan } from './plan.js';
import { ToolPlane } from './session.js';
import { runStdioProxy } from './stdio-proxy.js';
import type { ProgramPolicy } from '../consent/index.js';
import { startHttpProxy } from './http-proxy.js';

export interface ScenarioCall {
  tool: string;
  arguments: Record<string, unknown>;
}

export interface ToolCallScenario {
  /**
   * The server: a command to spawn (`argument`: what named it, for consent's refusals), or a URL with the lookup its
   * name is resolved through at every connect (the target policy's: a name checked when read may resolve elsewhere).
   */
  target: { command: string; args: string[]; argument?: string } | { url: string; lookup: LookupFunction };
  /** Whether a stdio server may be started (src/consent). */
  programs: ProgramPolicy;
  /** Start even where the environment says production (--allow-production; src/production.ts). */
  allowProduction?: boolean;
  plan: Plan;
  calls: ScenarioCall[];
  tasks: number;
  resilience: boolean;
  /** Client-side timeout of one call (ms): a hung call is cancelled after it. */
  callTimeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, message: string) => void;
}

export interface ToolCallScenarioResult {
  slis: Slis;
  report: string;
  records: CallRecord[];
  transport: 'stdio' | 'http';
  client_errors: number;
}

/** How long the target may take to answer initialize. */
const CONNECT_TIMEOUT_MS = 15_000;

export { SCENARIO_LIMITS } from './limits.js';

export async function runToolCallScenario(scenario: ToolCallScenario): Promise<ToolCallScenarioResult> {
  const plane = new ToolPlane(scenario.plan);
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  scenario.signal?.addEventListener('abort', onAbort, { once: true });
  const client = new Client({ name: 'faultline-toolcall', version: '1' });
  let finishProxy: () => Promise<void> = async () => undefined;
  let clientErrors = 0;
  let serverGone = false;
  const session = plane.session();
  try {
    let transport: Transport;
    if ('command' in scenario.target) {
      const toProxy = new PassThrough();
      const fromProxy = new PassThrough();
      const proxy = runStdioProxy({
        command: scenario.target.command,
        args: scenario.target.args,
        programs: scenario.programs,
        ...(scenario.target.argument ? { argument: scenario.target.argument } : {}),
        plane,
        allowProduction: scenario.allowProduction === true,
        input: toProxy,
        output: fromProxy,
        stderr: 'ignore',
        signal: stop.signal,
        graceMs: 1000,
      });
      proxy.catch(() => undefined);
      // The server exiting on its own ends the proxy; calls after that have no server to reach.
      const gone = (): void => {
        serverGone = true;
        fromProxy.end(); // the client's pending call fails now ("connection closed"), not at its timeout
      };
      void proxy.then(gone, gone);
      transport = new StreamTransport(fromProxy, toProxy);
      finishProxy = async () => {
        toProxy.end();
        await proxy.catch(() => undefined);
      };
      const connected = client.connect(transport, { signal: stop.signal, timeout: CONNECT_TIMEOUT_MS });
      await Promise.race([
        connected,
        proxy.then(() => Promise.reject(new Error('the server exited before it answered initialize'))),
      ]);
    } else {
      const proxy = await startHttpProxy({
        plane,
        upstream: scenario.target.url,
        lookup: scenario.target.lookup,
        allowProduction: scenario.allowProduction === true,
      });
      finishProxy = () => proxy.close();
      await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)), {
        signal: stop.signal,
        timeout: CONNECT_TIMEOUT_MS,
      });
    }
    const { tools: listed } = await client.listTools({}, { signal: stop.signal });
    // A call to a tool the server does not have would fail every time and read as a resilience
    // failure; a typo in `calls` is the likelier cause, so say so. Tools the plan adds to the
    // list (list_changed) are fair game: failing calls to them are that fault's point.
    const offered = new Set([...plane.serverToolNames(), ...listed.map((tool) => tool.name)]);
    const missing = [...new Set(scenario.calls.map((call) => call.tool).filter((name) => !offered.has(name)))];
    if (missing.length > 0) {
      const names = plane.serverToolNames();
      throw new InputError(
        `calls: the server has no tool ` +
          `${missing.map((name) => JSON.stringify(name)).join(', ')}; its ` +
          `tools/list has ${names.length === 0 ? 'no tools' : names.slice(0, 20).join(', ') + (names.length > 20 ? ', …' : '')}`,
      );
    }
    const total = scenario.tasks * scenario.calls.length;
    let done = 0;
    for (let t = 1; t <= scenario.tasks; t++) {
      for (const call of scenario.calls) {
        for (let attempt = 0; attempt <= (scenario.resilience ? 2 : 0); attempt++) {
          if (stop.signal.aborted) throw new CancelledError();
          if (serverGone) {
            // Not sent (it would only wait out its timeout): recorded as the unanswered call it is.
            session.callWithoutServer(call.tool, call.arguments, { task_id: `task-${t}` });
            continue;
          }
          const ok = await withCallSignal(stop.signal, (signal) =>
            client.callTool(
              { name: call.tool, arguments: call.arguments, _meta: { task_id: `task-${t}` } },
              undefined,
              { signal, timeout: scenario.callTimeoutMs },
            ),
          )
            .then((result) => result.isError !== true)
            .catch(() => {
              clientErrors += 1;
              return false;
            });
          await new Promise((resolve) => setImmediate(resolve)); // let the proxy write the journal record
          if (ok) break;
        }
        done += 1;
        scenario.onProgress?.(done, total, `${call.tool} (task ${t}/${scenario.tasks})`);
      }
    }
    if (stop.signal.aborted) throw new CancelledError();
    const slis = plane.slis();
    return {
      slis,
      report: renderReport(slis, 'Tool-call chaos scenario'),
      records: plane.records,
      transport: 'command' in scenario.target ? 'stdio' : 'http',
      client_errors: clientErrors,
    };
  } finally {
    scenario.signal?.removeEventListener('abort', onAbort);
    // Closing the client ends the server's stdin: a run that ended normally lets it stop the polite
    // way (the proxy ends its whole process tree after the grace period); a cut or cancelled run
    // aborted `stop` already, which ends the tree at once.
    await client.close().catch(() => undefined);
    await finishProxy();
    stop.abort();
  }
}

/**
 * Runs one request with a signal of its own that `run` aborts. The SDK client adds an abort
 * listener to a request's signal and never removes it, so the run's signal given to each of up to
 * 2000 calls kept every listener (and warned of a leak after 10); a call's own signal goes with it.
 */
async function withCallSignal<T>(run: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const call = new AbortController();
  const relay = (): void => call.abort(run.reason);
  if (run.aborted) relay();
  else run.addEventListener('abort', relay, { once: true });
  try {
    return await work(call.signal);
  } finally {
    run.removeEventListener('abort', relay);
  }
}

/** An MCP client transport over a pair of in-process streams (the stdio proxy's ends). */
class StreamTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly input: PassThrough,
    private readonly output: PassThrough,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (!message) break;
        this.onmessage?.(message);
      }
    });
    this.input.on('end', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.output.writableEnded) this.output.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.output.end();
    this.onclose?.();
  }
}
