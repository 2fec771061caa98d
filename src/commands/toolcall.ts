/**
 * `faultline toolcall proxy stdio|http` and `faultline toolcall demo`: chaos for the MCP tool-call
 * plane. `mcp-chaos` is an alias (mcp-chaos's own spelling), so its users change only the binary
 * name. The tool-call plane module (and yaml, ajv) are imported
 * inside the actions, so other commands do not load them.
 */
import { ProgramPolicy } from '../consent/index.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ToolPlane } from '../toolcall/session.js';
import { bindRefusal } from '../target-policy.js';
import { checkWritable, runCommand, UsageError, withInterrupt } from './run-command.js';
import { httpUrl, portNumber, positiveInteger } from './parsers.js';
import { type GlobalOptions } from './flags.js';

interface PlaneFlags {
  plan?: string;
  journal?: string;
  json?: string;
  metrics?: string;
  report?: string;
  strict?: boolean;
  taskIdleMs?: number;
  maxMessageBytes?: number;
  allowProduction?: boolean;
}

export function registerToolcallCommand(program: Command, _globals?: () => GlobalOptions): void {
  const chaos = program
    .command('toolcall')
    .alias('mcp-chaos')
    .summary('chaos for the MCP tool-call plane: fault-injecting proxies and an offline demo')
    .description(
      'Put a fault plan between an MCP client and any MCP server (stdio ' +
        'or streamable HTTP) and measure what the client gets: ' +
        'TCSR, availability, correctness, ETA, schema conformance, TCAF, ' +
        'deadline adherence, blast radius. Same spelling as mcp-chaos.',
    );
  registerProxyCommands(chaos);
  registerDemoCommand(chaos);
}

function registerProxyCommands(chaos: Command): void {
  const proxy = chaos
    .command('proxy')
    .summary('run a fault-injecting MCP proxy (stdio or http)')
    .description('Run a fault-injecting MCP proxy.');
  const stdio = proxy
    .command('stdio')
    .summary('spawn an MCP server and relay its stdio through the plan')
    .description(
      'Spawn CMD ARGS… as the MCP server, relay newline-delimited ' +
        'JSON-RPC both ways through the plan, pass its stderr through. ' +
        'Replace the server command in a client config with `faultline ' +
        'toolcall proxy stdio --plan p.yaml -- CMD ARGS…`. ' +
        'On exit the markdown report goes to stderr (stdout is the protocol).',
    )
    .argument('<command...>', 'the MCP server command and its arguments (after --)');
  addPlaneFlags(stdio)
    .addHelpText(
      'after',
      '\nExamples:\n  faultline toolcall proxy stdio --plan plan.yaml ' +
        '--journal calls.jsonl -- python server.py\n  faultline toolcall ' +
        'proxy stdio --plan plan.json --strict -- npx -y ' +
        '@modelcontextprotocol/server-everything',
    )
    .action((command: string[], flags: PlaneFlags) =>
      runCommand(async () => {
        const { runStdioProxy } = await import('../toolcall/stdio-proxy.js');
        const plane = await makePlane(flags, `toolcall proxy stdio ${command.join(' ')}`);
        const result = await withInterrupt((signal) =>
          runStdioProxy({
            command: command[0]!,
            args: command.slice(1),
            programs: ProgramPolicy.owner(),
            plane: plane.plane,
            allowProduction: flags.allowProduction === true,
            input: process.stdin,
            output: process.stdout,
            signal,
          }),
        );
        await plane.finish();
        if (result.exitCode !== null && result.exitCode !== 0) process.exitCode = result.exitCode;
      }),
    );

  const http = proxy
    .command('http')
    .summary('a streamable-HTTP MCP proxy in front of --upstream')
    .description(
      'Listen on --host:--port (loopback by default) and proxy ' +
        'streamable HTTP to --upstream through the plan: POST with JSON ' +
        'or SSE ' +
        'replies, GET streams, DELETE, 202 for notifications; ' +
        'Mcp-Session-Id, Authorization, MCP-Protocol-Version and ' +
        'Last-Event-ID ' +
        'forwarded. GET /metrics returns the SLIs as JSON, GET /healthz ' +
        '{"status":"ok"}. Runs until Ctrl-C; the report goes to stdout.',
    )
    .requiredOption('--upstream <url>', 'the upstream MCP endpoint, e.g. http://127.0.0.1:3000/mcp', parseUrl)
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <n>', 'port to listen on (default 8900; 0 = any free port)', portNumber)
    .option(
      '--allow-non-loopback-bind',
      'let --host be an address other than 127.0.0.1/::1 (exposes the ' +
        "upstream's tools to the network, with no authentication of the " +
        "proxy's own)",
    );
  addPlaneFlags(http)
    .addHelpText(
      'after',
      '\nExamples:\n  faultline toolcall proxy http --plan plan.yaml ' +
        '--upstream http://127.0.0.1:3000/mcp --port 8900\n  curl ' +
        'http://127.0.0.1:8900/metrics',
    )
    .action((flags: PlaneFlags & { upstream: string; host?: string; port?: number; allowNonLoopbackBind?: boolean }) =>
      runCommand(async () => {
        const host = flags.host ?? '127.0.0.1';
        // A relay, not an API of faultline's own: the upstream's own authentication (forwarded) applies.
        const exposed = bindRefusal(host, {
          argument: `--host ${host}`,
          what: 'the proxy',
          allowNonLoopbackBind: flags.allowNonLoopbackBind === true,
        });
        if (exposed) throw new UsageError(exposed);
        // Driven by a person, so remote upstreams are allowed (as with 'faultline proxy'); link-local
        // and cloud metadata addresses never, checked now and again at every connect.
        const [{ startHttpProxy }, { checkLoadTarget }, { targetLookup }] = await Promise.all([
          import('../toolcall/http-proxy.js'),
          import('../scenario/target.js'),
          import('../target-policy.js'),
        ]);
        await checkLoadTarget(flags.upstream, true, '--upstream');
        const plane = await makePlane(flags, `toolcall proxy http ${flags.upstream}`);
        const server = await startHttpProxy({
          plane: plane.plane,
          allowProduction: flags.allowProduction === true,
          upstream: flags.upstream,
          host,
          port: flags.port ?? 8900,
          lookup: targetLookup(true),
        });
        process.stderr.write(`toolcall proxy listening on ${server.url} → ${flags.upstream}\n`);
        await withInterrupt(
          (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
        );
        await server.close();
        await plane.finish(process.stdout);
      }),
    );
}

function registerDemoCommand(chaos: Command): void {
  chaos
    .command('demo')
    .summary('offline simulator: blast radius with and without resilience (no network, deterministic)')
    .description(
      'Simulate an agent whose tasks each fan out to --fanout tool ' +
        'calls against an in-process fake MCP server, through the same ' +
        'fault code as the proxies, without and with resilience (2 ' +
        'retries, graceful degradation of the last 2 calls, a circuit ' +
        'breaker with half-open probes). Fault decisions draw from ' +
        "Python's random.Random(seed) stream in mcp-chaos's order, so the " +
        "defaults print mcp-chaos's published table. Prints TCAF, TCSR, " +
        'ETA, blast radius, A and C, and the prediction ' +
        '1 − (1 − e)^TCAF at the measured e.',
    )
    .addOption(new Option('--tasks <n>', 'tasks to simulate (default 200, at most 100000)').argParser(positiveInteger))
    .addOption(
      new Option('--fanout <n>', 'tool calls per task (TCAF; default 8, at most 100)').argParser(positiveInteger),
    )
    .addOption(new Option('--error-rate <e>', 'per-call error probability 0..1 (default 0.02)').argParser(rate))
    .addOption(
      new Option(
        '--seed <seed>',
        'seed of the fault decisions, an integer or text, as Python seeds random.Random (default 42)',
      ),
    )
    .addOption(new Option('--correlated', 'errors come in Markov bursts (mean length 8) at the same marginal rate'))
    .addOption(new Option('--json', 'print the result as JSON'))
    .addHelpText(
      'after',
      '\nExamples:\n  faultline toolcall demo\n  faultline toolcall ' +
        'demo --fanout 20 --error-rate 0.05 --correlated --json',
    )
    .action(
      (flags: {
        tasks?: number;
        fanout?: number;
        errorRate?: number;
        seed?: string;
        correlated?: boolean;
        json?: boolean;
      }) =>
        runCommand(async () => {
          const { runDemo, renderDemo, DEMO_LIMITS } = await import('../toolcall/simulator.js');
          const tasks = flags.tasks ?? 200;
          const fanout = flags.fanout ?? 8;
          if (tasks > DEMO_LIMITS.tasks) throw new UsageError(`--tasks: at most ${DEMO_LIMITS.tasks}`);
          if (fanout > DEMO_LIMITS.fanout) throw new UsageError(`--fanout: at most ${DEMO_LIMITS.fanout}`);
          const seed =
            flags.seed === undefined ? 42 : /^-?\d+$/.test(flags.seed.trim()) ? Number(flags.seed) : flags.seed;
          if (typeof seed === 'number' && !Number.isSafeInteger(seed))
            throw new UsageError(
              `--seed: an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}, or any other text`,
            );
          const result = await runDemo({
            tasks,
            fanout,
            errorRate: flags.errorRate ?? 0.02,
            seed,
            correlated: flags.correlated ?? false,
          });
          process.stdout.write(flags.json ? JSON.stringify(result, null, 2) + '\n' : renderDemo(result));
        }),
    );
}

function addPlaneFlags(command: Command): Command {
  return command
    .option('--plan <file>', 'fault plan, YAML or JSON (mcp-chaos format plus faultline faults; default: no faults)')
    .option('--journal <file>', 'append one JSON line per tool call to FILE')
    .option(
      '--json <file>',
      'write the run as JSON to FILE on exit: a run record for ' +
        '`faultline coverage` (kind toolcall, the faults injected), the ' +
        'SLIs under "slis"',
    )
    .option('--metrics <file>', 'write the SLIs as JSON to FILE on exit')
    .option('--report <file>', 'write the markdown report to FILE on exit')
    .option(
      '--strict',
      'fail closed: an internal proxy error answers the client with a JSON-RPC error (default: forward the original)',
    )
    .option(
      '--task-idle-ms <ms>',
      "calls without a _meta task id start a new task after this idle gap (default: the plan's task_idle_ms, 2000)",
      nonNegativeInteger,
    )
    .option(
      '--max-message-bytes <n>',
      `largest message read from either side (default ` +
        `${DEFAULT_MAX_MESSAGE_BYTES}, 32 MiB; at most ` +
        `${MAX_MESSAGE_BYTES}); a larger one, or one nested deeper than ` +
        `512 levels, is passed on unread (with --strict: its request is ` +
        `answered with an error)`,
      messageBytes,
    )
    .option(
      '--allow-production',
      'run even where the environment says production (NODE_ENV, ' +
        'ENVIRONMENT, APP_ENV … = prod*, production, prd, live; env ' +
        'FAULTLINE_ALLOW_PRODUCTION=1)',
    );
}

async function makePlane(
  flags: PlaneFlags,
  name: string,
): Promise<{ plane: ToolPlane; finish(out?: NodeJS.WritableStream): Promise<void> }> {
  const startedAt = new Date();
  const { readFile, writeFile } = await import('node:fs/promises');
  const { createWriteStream } = await import('node:fs');
  const { ToolPlane } = await import('../toolcall/session.js');
  const { parsePlanText, EMPTY_PLAN } = await import('../toolcall/plan.js');
  const { renderReport } = await import('../toolcall/metrics.js');
  const { toolcallRunRecord } = await import('../toolcall/run-record.js');
  // Refused now, not after a run of hours whose results then have nowhere to go.
  for (const [flag, file] of [
    ['--journal', flags.journal],
    ['--json', flags.json],
    ['--metrics', flags.metrics],
    ['--report', flags.report],
  ] as const) {
    if (file !== undefined) await checkWritable(flag, file);
  }
  let plan = EMPTY_PLAN;
  if (flags.plan !== undefined) {
    let text: string;
    try {
      text = await readFile(flags.plan, 'utf8');
    } catch (error) {
      throw new UsageError(
        `--plan: cannot read ${flags.plan}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    plan = await parsePlanText(text, `--plan ${flags.plan}`);
  }
  const journal = flags.journal ? createWriteStream(flags.journal, { flags: 'a' }) : undefined;
  const plane = new ToolPlane(plan, {
    strict: flags.strict ?? false,
    ...(flags.taskIdleMs !== undefined ? { taskIdleMs: flags.taskIdleMs } : {}),
    ...(flags.maxMessageBytes !== undefined ? { maxMessageChars: flags.maxMessageBytes } : {}),
    onRecord: (record) => journal?.write(JSON.stringify(record) + '\n'),
  });
  return {
    plane,
    async finish(out = process.stderr) {
      if (journal) await new Promise<void>((resolve) => journal.end(() => resolve()));
      const slis = plane.slis();
      const report = renderReport(slis);
      if (flags.metrics) await writeFile(flags.metrics, JSON.stringify(slis, null, 2) + '\n');
      if (flags.json)
        await writeFile(flags.json, JSON.stringify(toolcallRunRecord(slis, name, startedAt), null, 2) + '\n');
      if (flags.report) await writeFile(flags.report, report);
      out.write(report);
    },
  };
}

function parseUrl(value: string): string {
  return httpUrl(value);
}

function rate(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n >= 1)
    throw new InvalidArgumentError('expected a probability from 0 to below 1, e.g. 0.02');
  return n;
}

/** The proxies' default bound on one message (DEFAULT_MAX_MESSAGE_CHARS, not imported so the plane loads only when
 * used). */
const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
const MAX_MESSAGE_BYTES = 512 * 1024 * 1024;

function messageBytes(value: string): number {
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || n < 1024 || n > MAX_MESSAGE_BYTES)
    throw new InvalidArgumentError(`expected a whole number of bytes from 1024 to ${MAX_MESSAGE_BYTES}`);
  return n;
}

function nonNegativeInteger(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('expected a whole number of milliseconds ≥ 0');
  return Number(value);
}
