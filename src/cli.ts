#!/usr/bin/env node
/**
 * Entry point of the `faultline` command. When it is about to serve MCP on stdio, it reserves
 * stdout for the protocol before loading anything else, so not even a dependency printing while
 * it loads can corrupt the stream, starts the code listing thread and starts loading the server.
 * Then it loads and runs the command-line program.
 */
import { plainSearch } from './commands/plain-search.js';
import { isStdioServerInvocation, protectStdout } from './transports/stdout-guard.js';

if (isStdioServerInvocation(process.argv)) {
  protectStdout();
  // First of all, the listing thread (src/code/listing-thread.ts): it readies tree-sitter on the
  // second core while this thread loads the server, and the first code call finds it warm. The
  // server stops it when the code and review toolsets are off (commands/mcp.ts).
  import('./code/listing-thread.js').then(({ startListingThread }) => startListingThread()).catch(() => undefined);
  // Start loading the server (the MCP SDK and zod, most of the start-up) while main.ts loads the
  // command-line parser: the two overlap their file reads. main.ts imports the same module (a
  // failure surfaces there).
  import('./commands/mcp.js').catch(() => undefined);
}
// A reader that goes away (`faultline --help | head`, a client that closed the pipe) is the end
// of the conversation, not a crash.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
// A plain search (plain-search.ts) skips commander and the other commands: a person or an
// agent's shell runs it from a fresh process each time, and their loading was most of its time.
const plain = plainSearch(process.argv);
if (plain) {
  const [{ runSearchCommand }, { makeConfig }] = await Promise.all([
    import('./commands/search-action.js'),
    import('./config.js'),
  ]);
  await runSearchCommand(plain.query, plain, () => makeConfig());
} else {
  const { main } = await import('./main.js');
  await main(process.argv);
}
