/**
 * `faultline mcp` (the native spelling) and `faultline agent tool` (fault's spelling, so its
 * users' client configs work after changing only the command name): both start the MCP server.
 */
import type { Command } from 'commander';
import { constants as osConstants } from 'node:os';
import { Option } from './commander.js';
import { createServer } from '../server.js';
import { LineJsonRpcTransport } from '../transports/stdio.js';
import { protectStdout } from '../transports/stdout-guard.js';
import { messageOf } from '../kernel/errors.js';
import { bindRefusal, describeTargets } from '../target-policy.js';
import { MAX_SESSIONS } from '../transports/limits.js';
import type { Config } from '../config.js';
import { commandAllowance } from '../consent/allowance.js';
import type { Logger } from '../log.js';
import { UsageError, runCommand } from './run-command.js';
import { portNumber, positiveInteger } from './parsers.js';
import { addServerOptions, type GlobalOptions, type ServerOptionValues } from './flags.js';
import { configFrom, loggerFor } from './flag-values.js';

export const DEFAULT_HTTP_PORT = 8808;

/** Which programs an MCP call may start (src/consent): none unless the owner says so here. */
interface ConsentFlags {
  allowCommands?: boolean;
  allowCommand?: string[];
  consentTimeout?: number;
}

function addConsentOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--allow-commands',
        'let MCP calls start any program (experiment commands and ' +
          'rollbacks, tool-call and probe servers); default: none without ' +
          'asking',
      ),
    )
    .addOption(
      new Option(
        '--allow-command <prog>',
        'let MCP calls start this executable (repeatable; resolved on ' +
          'PATH now; env FAULTLINE_ALLOW_COMMANDS: a comma-separated list, ' +
          '* for any)',
      ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .addOption(
      new Option(
        '--consent-timeout <seconds>',
        'how long a person asked to allow a program (MCP elicitation) has to answer; no answer refuses (default 120)',
      ).argParser(positiveInteger),
    );
}

/** The configuration with the owner's allowance of programs, resolved now (a program not found is a usage error). */
function withConsent(config: Config, flags: ConsentFlags): Config {
  try {
    config.commands = commandAllowance(flags);
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
  if (flags.consentTimeout !== undefined) config.consentTimeoutMs = flags.consentTimeout * 1000;
  return config;
}

interface McpOptions extends ServerOptionValues, ConsentFlags {
  transport: 'stdio' | 'http';
  host: string;
  port: number;
  /** A string from --token or FAULTLINE_TOKEN, false from --no-token, undefined when neither was given. */
  token?: string | false;
  maxSessions?: number;
}

export function registerMcpCommands(program: Command, globals: () => GlobalOptions): void {
  const mcp = program
    .command('mcp')
    .summary('run the MCP server (stdio or streamable HTTP)')
    .description(
      'Run the faultline MCP server. With --transport stdio (the default) an MCP client spawns it and ' +
        'talks JSON-RPC over stdin/stdout; logs go to stderr or --log-file. With --transport http it serves ' +
        `streamable HTTP at http://HOST:PORT/mcp (127.0.0.1:${DEFAULT_HTTP_PORT} by default).`,
    )
    .addOption(new Option('--transport <kind>', 'how clients connect').choices(['stdio', 'http']).default('stdio'))
    .addOption(new Option('--host <address>', 'address the HTTP transport binds').default('127.0.0.1'))
    .addOption(
      new Option('--port <n>', 'port of the HTTP transport (0: any free port)')
        .argParser(portNumber)
        .default(DEFAULT_HTTP_PORT),
    )
    .addOption(
      new Option(
        '--token <token>',
        'require Authorization: Bearer <token> on HTTP requests (default: a token generated at start, printed once)',
      ).env('FAULTLINE_TOKEN'),
    )
    .addOption(new Option('--no-token', 'serve HTTP without a token: any local process or user may call the tools'))
    .addOption(
      new Option(
        '--max-sessions <n>',
        `most HTTP sessions open at once; beyond, an inactive one is ` +
          `closed or initialize answers 503 (default ${MAX_SESSIONS})`,
      ).argParser(positiveInteger),
    );
  addConsentOptions(addServerOptions(mcp)).action((options: McpOptions) =>
    runCommand(async () => {
      if (options.transport === 'stdio') {
        const httpOnly = ['host', 'port', 'token', 'maxSessions'].filter(
          (name) => mcp.getOptionValueSource(name) === 'cli',
        );
        const flags = httpOnly.map((name) =>
          name === 'token' && options.token === false
            ? '--no-token'
            : `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
        );
        if (flags.length > 0)
          throw new UsageError(
            `${flags.join(', ')} ${flags.length === 1 ? 'applies' : 'apply'} to --transport http only`,
          );
      }
      const config = withConsent(configFrom(globals(), options), options);
      if (options.transport === 'http') await runHttp(config, globals(), options);
      else await runStdio(config, globals());
    }),
  );

  const agent = program
    .command('agent')
    .summary("fault-compatible spelling: 'faultline agent tool' runs the MCP server on stdio")
    .description("The reference tool's spelling. 'faultline agent [LLM flags] tool' is 'faultline mcp' on stdio.");
  addConsentOptions(addServerOptions(agent));
  agent
    .command('tool')
    .description('run the MCP server on stdio (same as: faultline mcp --transport stdio)')
    .addHelpText('after', "\nIt takes the agent's flags, before or after 'tool': see 'faultline agent --help'.")
    .action(() =>
      runCommand(() => {
        const flags = agent.opts<ServerOptionValues & ConsentFlags>();
        return runStdio(withConsent(configFrom(globals(), flags), flags), globals());
      }),
    );
}

async function runStdio(config: Config, globals: GlobalOptions): Promise<void> {
  // Usually installed already by cli.ts before any module loaded; from here on, only the
  // protocol writes to stdout.
  const protocolOut = protectStdout();
  const log = loggerFor(globals);
  log.debug('configuration: %j', config);
  startCodeThread(config, log);
  const { mcp } = createServer(config, { log });
  const transport = new LineJsonRpcTransport(process.stdin, protocolOut);
  transport.onerror = (error) => log.warn('stdio: %s', error.message);
  let stopping = false;
  const stop = async (why: string, exitCode = 0): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('stopping (%s)', why);
    process.exitCode = exitCode;
    await mcp.close().catch(() => undefined);
    await log.close();
    // Work still running (a scenario, an LLM call) was cancelled by close(); do not wait on it.
    setTimeout(() => process.exit(exitCode), 1000).unref();
  };
  transport.onclose = () => void stop('stdin closed');
  keepAlive(log, stop);
  await mcp.connect(transport);
  log.info('faultline MCP server ready on stdio; targets allowed: %s', describeTargets(config.scenario));
}

/**
 * Starts the listing thread (src/code/listing-thread.ts) when the code or review toolset is
 * enabled: it readies tree-sitter, the common grammars and queries and V8's compiled code on the
 * second core while this thread loads the server and answers initialize (for stdio cli.ts started
 * it before loading the server; it is stopped here when neither toolset is on), so an agent's first code
 * tool call is not several times slower than the next. The thread never keeps the process alive
 * and works off this thread, so a scenario measuring here does not see it.
 */
function startCodeThread(config: Config, log: Logger): void {
  const wanted = config.toolsets.includes('code') || config.toolsets.includes('review');
  // cli.ts started it already for stdio, before knowing the toolsets.
  if (!wanted) {
    void import('../code/listing-thread.js').then(({ stopListingThread }) => stopListingThread());
    return;
  }
  import('../code/listing-thread.js')
    .then(async ({ startListingThread }) => {
      const thread = startListingThread();
      // Its warm-up holds while a scenario or experiment measures here (src/measuring.ts).
      const { onMeasuring } = await import('../measuring.js');
      if (thread) onMeasuring((measuring) => thread.hold(measuring));
      return thread?.warmedUp;
    })
    .then(() => log.debug('code warm-up: done'))
    .catch((error: unknown) => log.debug('listing thread: %s', messageOf(error)));
}

async function runHttp(config: Config, globals: GlobalOptions, flags: McpOptions): Promise<void> {
  // [::1] as a URL writes it is the address ::1 to listen on.
  const options = { ...flags, host: flags.host.replace(/^\[(.*)\]$/, '$1') };
  if (typeof options.token === 'string' && options.token.trim() === '')
    throw new UsageError('--token: must not be blank');
  const chosenToken = typeof options.token === 'string' ? options.token : undefined;
  const log = loggerFor(globals);
  log.debug('configuration: %j', config);
  startCodeThread(config, log);
  // The one bind rule (src/target-policy.ts): beyond loopback only with --allow-non-loopback-bind,
  // and this API, which runs faultline's tools, needs its token there too.
  const exposed = bindRefusal(options.host, {
    argument: `--host ${options.host}`,
    what: 'the MCP HTTP server',
    allowNonLoopbackBind: options.allowNonLoopbackBind === true,
    // Beyond loopback the owner chooses the token: a generated one is for the person at this machine.
    token: { value: chosenToken, flag: '--token T (or FAULTLINE_TOKEN)' },
  });
  if (exposed) throw new UsageError(exposed);
  // Safe by default, as Jupyter is: with neither --token nor --no-token, any local process could
  // call the tools, so a token is generated and shown once, to whoever started the server.
  // node:crypto is loaded here only: stdio never needs it, and it costs ~5 ms of every start-up.
  const generate = async (): Promise<string> => (await import('node:crypto')).randomBytes(24).toString('base64url');
  const token = options.token === false ? undefined : (chosenToken ?? (await generate()));
  // Loaded only for HTTP: the SDK's HTTP transport brings a web framework stdio never needs.
  const { serveHttp } = await import('../transports/http.js');
  let server;
  try {
    server = await serveHttp({
      host: options.host,
      port: options.port,
      token,
      log,
      maxSessions: options.maxSessions,
      newSession: () => createServer(config, { log }),
    });
  } catch (error) {
    throw new UsageError(
      `--port ${options.port}: cannot listen on ${options.host}:${options.port} (${messageOf(error)})`,
    );
  }
  // One write: whoever reads stderr for the address (a script, a test) finds the generated token with it.
  const generated =
    options.token === undefined && token !== undefined
      ? `token (generated; send Authorization: Bearer <token>, or choose one with --token or FAULTLINE_TOKEN): ` +
        `${token}\n`
      : '';
  process.stderr.write(
    `faultline MCP server listening on ${server.url}\ntargets allowed: ${describeTargets(config.scenario)}\n` +
      generated,
  );
  if (token === undefined) log.warn('HTTP without a token (--no-token): any local process may call the tools');
  const running = server;
  keepAlive(log, async (why, exitCode) => {
    log.info('stopping (%s)', why);
    await running.close();
    await log.close();
    process.exit(exitCode);
  });
}

/**
 * Signals stop the server, which then exits 128 + the signal's number (130, 143), as a shell
 * reports it and as every other command does; a stray rejection or exception is logged and never
 * kills it.
 */
function keepAlive(log: Logger, stop: (why: string, exitCode: number) => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => void stop(signal, 128 + osConstants.signals[signal]));
  process.on('unhandledRejection', (reason) =>
    log.error('unhandled rejection: %s', reason instanceof Error ? reason.stack : String(reason)),
  );
  process.on('uncaughtException', (error) => log.error('uncaught exception: %s', error.stack ?? error.message));
}
