/**
 * The `faultline` command: parses argv (and the env vars that stand for flags) and runs one
 * command. Usage errors are one line on stderr and exit code 2, with nothing on stdout.
 */
import type { Command } from 'commander';
import { CommanderError } from './commands/commander.js';
import { EXIT_USAGE } from './commands/run-command.js';
import { FaultlineCommand } from './commands/faultline-command.js';
import { addGlobalOptions, type GlobalOptions } from './commands/flags.js';
import { VERSION } from './version.js';

type Register = (program: Command, globals: () => GlobalOptions) => void;

/**
 * Every top-level command, by name, with the module that registers it. A command's module (and
 * what it imports: the MCP SDK, the proxy, tree-sitter…) is loaded only when argv names that
 * command, so `faultline --version` or `faultline proxy` never pay for the MCP server. Help and
 * unknown commands load them all, to list them. Keep the order: it is the order of `--help`.
 */
const COMMANDS: ReadonlyArray<{ names: readonly string[]; load: () => Promise<Register> }> = [
  { names: ['mcp', 'agent'], load: async () => (await import('./commands/mcp.js')).registerMcpCommands },
  { names: ['code'], load: async () => (await import('./commands/code.js')).registerCodeCommand },
  { names: ['index', 'search'], load: async () => (await import('./commands/index-command.js')).registerIndexCommands },
  { names: ['run'], load: async () => (await import('./commands/run.js')).registerRunCommand },
  { names: ['proxy'], load: async () => (await import('./commands/proxy.js')).registerProxyCommand },
  { names: ['chaos'], load: async () => (await import('./commands/chaos.js')).registerChaosCommand },
  { names: ['demo'], load: async () => (await import('./commands/demo.js')).registerDemoCommand },
  { names: ['fis'], load: async () => (await import('./commands/fis.js')).registerFisCommand },
  { names: ['export'], load: async () => (await import('./commands/export.js')).registerExportCommand },
  {
    names: ['toolcall', 'mcp-chaos'],
    load: async () => (await import('./commands/toolcall.js')).registerToolcallCommand,
  },
  { names: ['probe'], load: async () => (await import('./commands/probe.js')).registerProbeCommand },
  { names: ['coverage'], load: async () => (await import('./commands/coverage.js')).registerCoverageCommand },
  {
    names: ['toxiproxy', 'toxiproxy-cli'],
    load: async () => (await import('./commands/toxiproxy.js')).registerToxiproxyCommands,
  },
  { names: ['experiment'], load: async () => (await import('./commands/experiment.js')).registerExperimentCommand },
];

async function programWith(commands: typeof COMMANDS): Promise<FaultlineCommand> {
  const registers = await Promise.all(commands.map((command) => command.load()));
  const program = new FaultlineCommand('faultline');
  program
    .description(
      'Chaos-engineering and code-analysis tools for AI agents, served over MCP. Run it as an MCP server ' +
        "(faultline mcp, or fault's spelling faultline agent tool), or use its tools directly from the shell.",
    )
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .showSuggestionAfterError(false)
    .exitOverride()
    .configureOutput({
      outputError: (message, write) => write(`faultline: ${message.replace(/^error: /, '')}`),
    });
  addGlobalOptions(program);
  const globals = (): GlobalOptions => program.opts<GlobalOptions>();

  for (const register of registers) register(program, globals);

  program.addHelpText(
    'after',
    `
Examples:
  faultline mcp                                  MCP server on stdio (what an MCP client spawns)
  faultline agent --llm-client ollama tool       the same, in fault's spelling
  faultline mcp --transport http --port 8808     MCP over streamable HTTP on 127.0.0.1

Environment: FAULT_LOG_FILE, FAULT_LOG_LEVEL, FAULT_AGENT_CLIENT, FAULT_AGENT_PROMPT_REASONING_MODEL,
FAULT_AGENT_EMBED_MODEL, FAULT_AGENT_EMBED_MODEL_DIMENSION, FAULT_LLM_BASE_URL, OPENAI_API_KEY,
OPENROUTER_API_KEY, GEMINI_API_KEY, OLLAMA_HOST, QDRANT_URL, QDRANT_API_KEY, FAULTLINE_DATA_DIR,
FAULTLINE_TOKEN, FAULTLINE_ALLOW_TARGETS, FAULTLINE_ALLOW_REMOTE_TARGETS, FAULTLINE_ADMIN_TOKEN, FAULTLINE_ADMIN_URL,
FAULTLINE_ALLOW_PRODUCTION.
Run 'faultline <command> --help' for a command's flags.`,
  );
  return program;
}

/**
 * The commands argv needs: the one it names; none when it names none and asks only for the
 * version; all of them otherwise (help, or an unknown command that must list the accepted ones).
 */
function commandsFor(argv: string[]): typeof COMMANDS {
  const name = commandName(argv.slice(2));
  if (name === undefined) return argv.slice(2).some((arg) => arg === '-V' || arg === '--version') ? [] : COMMANDS;
  const named = COMMANDS.find((command) => command.names.includes(name));
  return named ? [named] : COMMANDS;
}

/** The first argument that is not a global flag or a global flag's value. */
function commandName(args: string[]): string | undefined {
  const globals = new FaultlineCommand('faultline');
  addGlobalOptions(globals);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return undefined;
    if (!arg.startsWith('-')) return arg;
    const option = globals.options.find((candidate) => candidate.long === arg || candidate.short === arg);
    if (option && (option.required || option.optional)) i++;
  }
  return undefined;
}

/**
 * toxiproxy-server and toxiproxy-cli are Go programs whose long flags take one dash (-host,
 * -config, -tox): for those two commands, such a flag reads as its two-dash form (and --tox as
 * --toxicity), so their users' command lines work as typed.
 */
export function goStyleFlags(argv: string[]): string[] {
  const name = commandName(argv.slice(2));
  if (name !== 'toxiproxy' && name !== 'toxiproxy-cli') return argv;
  return argv.map((arg, index) => {
    if (index < 2) return arg;
    const long = /^-[a-z][a-zA-Z-]+(=.*)?$/.test(arg) ? `-${arg}` : arg;
    return long === '--tox' || long.startsWith('--tox=') ? long.replace('--tox', '--toxicity') : long;
  });
}

export async function main(rawArgv: string[]): Promise<void> {
  const argv = goStyleFlags(rawArgv);
  const program = await programWith(commandsFor(argv));
  if (argv.length <= 2) {
    program.outputHelp();
    return;
  }
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      const informational = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code);
      process.exitCode = informational ? 0 : EXIT_USAGE;
      return;
    }
    throw error;
  }
}
