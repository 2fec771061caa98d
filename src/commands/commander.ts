/**
 * commander's classes, loaded with require(). commander is CommonJS; at start-up Node 20 loads it
 * through require() in a third of the time an ESM `import` takes once the MCP SDK is loading
 * (measured 9–12 ms against 32–38 ms), and every MCP client waits for that start-up. The classes
 * are the same objects an `import … from 'commander'` gives (one module instance), so command
 * files may use either; the files on `faultline mcp`'s path (main.ts, the shared modules, mcp.ts) use this.
 */
import { createRequire } from 'node:module';
import type * as Commander from 'commander';

const commander = createRequire(import.meta.url)('commander') as typeof Commander;

export const { Command, CommanderError, InvalidArgumentError, Option } = commander;
export type Command = Commander.Command;
export type Option = Commander.Option;
