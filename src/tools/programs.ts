/**
 * The programs an MCP call may start (src/consent): the server owner's allowance (--allow-commands,
 * --allow-command), the roots the client works in, and — when the client declared elicitation —
 * its person, asked. Every tool that can start a program builds its policy here, per call.
 */
import { ProgramPolicy } from '../consent/index.js';
import type { ToolContext } from './context.js';
import type { ToolCall } from './define.js';

export function programsFor(ctx: ToolContext, call: ToolCall): ProgramPolicy {
  return ProgramPolicy.forAgent({
    allowance: ctx.config.commands,
    roots: ctx.access.roots,
    ask: call.ask,
    askTimeoutMs: ctx.config.consentTimeoutMs,
  });
}
