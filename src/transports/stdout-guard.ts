/**
 * Reserves the real stdout for the MCP protocol in stdio mode. After `protectStdout()`, every
 * write to process.stdout (console.log in a dependency, a stray banner) goes to stderr, and only
 * the writer it returns reaches the real stdout.
 *
 * This module imports nothing, so the CLI can install the guard before loading any dependency:
 * output printed while modules load is caught too.
 */

/** Where protocol messages are written. */
export interface ProtocolOutput {
  write(data: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

let installed: ProtocolOutput | undefined;

/** Installs the guard (once) and returns the writer for the real stdout. */
export function protectStdout(): ProtocolOutput {
  if (installed) return installed;
  const stdout = process.stdout;
  const realWrite = stdout.write.bind(stdout) as (data: string) => boolean;
  const toStderr = process.stderr.write.bind(process.stderr);
  stdout.write = ((...args: Parameters<typeof process.stderr.write>) => toStderr(...args)) as typeof stdout.write;
  installed = {
    write: (data) => realWrite(data),
    once: (event, listener) => stdout.once(event, listener),
  };
  return installed;
}

/**
 * Whether argv starts the MCP server on stdio (`mcp` without `--transport http`, or
 * `agent … tool`), decided before the full parser is loaded. Help and version requests are not.
 */
export function isStdioServerInvocation(argv: readonly string[]): boolean {
  // What follows `--` belongs to another program (`faultline probe -- node cli.js mcp`).
  const all = argv.slice(2);
  const end = all.indexOf('--');
  const args = end === -1 ? all : all.slice(0, end);
  if (args.some((arg) => arg === '-h' || arg === '--help' || arg === '-V' || arg === '--version' || arg === 'help'))
    return false;
  const transport = args.findIndex((arg) => arg === '--transport' || arg.startsWith('--transport='));
  const transportValue =
    transport === -1 ? 'stdio' : args[transport]!.includes('=') ? args[transport]!.split('=')[1] : args[transport + 1];
  if (args.includes('mcp')) return transportValue !== 'http';
  return args.includes('agent') && args.includes('tool');
}
