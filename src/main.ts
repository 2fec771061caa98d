/**
 * The `faultline` command: parses argv (and the env vars that stand for flags) and runs one
 * command. Usage errors are one line on stderr and exit code 2, with nothing on stdout.
 */
import { CommanderError } from 'commander';
import { FaultlineCommand, addGlobalOptions, EXIT_USAGE, type GlobalOptions } from './commands/common.js';
import { registerMcpCommands } from './commands/mcp.js';
import { registerCodeCommand } from './commands/code.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerIndexCommands } from './commands/index-command.js';
import { registerProxyCommand } from './commands/proxy.js';
import { registerRunCommand } from './commands/run.js';
import { registerProbeCommand } from './commands/probe.js';
import { registerCoverageCommand } from './commands/coverage.js';
import { VERSION } from './version.js';

export function buildProgram(): FaultlineCommand {
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

  registerMcpCommands(program, globals);
  registerCodeCommand(program, globals);
  registerIndexCommands(program, globals);
  registerRunCommand(program, globals);
  registerProxyCommand(program, globals);
  registerDemoCommand(program, globals);
  registerProbeCommand(program, globals);
  registerCoverageCommand(program, globals);

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
FAULTLINE_TOKEN, FAULTLINE_ALLOW_REMOTE_TARGETS.
Run 'faultline <command> --help' for a command's flags.`,
  );
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
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

