/**
 * TOOL — tool invocation: what a tool call does with arguments it did not expect (seeded hostile
 * cases per callable tool), and whether a stdio server keeps its stdout for the protocol.
 */
import { hostileCases } from '../args.js';
import { errorCode, type CheckContext, type ProbeCheck, type ToolCall } from './check.js';

const CRASH = 'FAULT-TOOL-CRASH';
const HANG = 'FAULT-TOOL-HANG';
const PROTOCOL_ERROR = 'FAULT-TOOL-PROTOCOL-ERROR';
const POLLUTION = 'FAULT-TOOL-STDOUT-POLLUTION';

/** The message of a hang finding: the bound, and whether progress had come before it stopped. */
export function hangMessage(call: ToolCall, bound: number, what: string): string {
  const progress =
    call.reply.progress > 0
      ? ` after ${call.reply.progress} progress notification(s), the last one more than ${bound} ms before it gave up`
      : ' and no progress';
  return `no answer within ${bound} ms${progress}, ${what}`;
}

/**
 * Hostile arguments: the answer should be a result with isError (a SHOULD: a JSON-RPC error for
 * bad arguments is a warning), never a crash or a hang (failures). A call that keeps sending
 * progress is working, not hung: its wait goes on with it, up to the run's bound.
 */
export const hostileArgumentsCheck: ProbeCheck = {
  id: 'tool-hostile-args',
  family: 'TOOL',
  leaves: { [CRASH]: 'failure', [HANG]: 'failure', [PROTOCOL_ERROR]: 'warning' },
  callsTools: true,
  async run(ctx) {
    let toolIndex = 0;
    for (const tool of ctx.callable) {
      const cases = hostileCases(tool.inputSchema ?? {}, ctx.settings.cases, ctx.settings.seed + toolIndex++);
      for (const c of cases) {
        if (!ctx.timeLeft()) return;
        ctx.progress(`TOOL: ${tool.name} with ${c.label}`);
        const peer = await ctx.session();
        const bound = ctx.bound();
        const call = await ctx.callTool(peer, tool, c.args, c.label);
        const what = `when ${tool.name} was called with ${c.label}`;
        if (call.outcome === 'closed' || !peer.alive()) {
          const how = ctx.target.kind === 'stdio' ? 'exited' : 'dropped the connection';
          ctx.report({
            leaf: CRASH,
            probe: this.id,
            tool: tool.name,
            message: `the server ${how} ${what}`,
            exchange: call.exchange,
            group: 'crash',
          });
          await ctx.recover(peer, CRASH);
          continue;
        }
        ctx.check(CRASH);
        if (call.outcome === 'hung') {
          ctx.report({
            leaf: HANG,
            probe: this.id,
            tool: tool.name,
            message: hangMessage(call, bound, what),
            exchange: call.exchange,
            group: 'hostile',
          });
          continue;
        }
        ctx.check(HANG);
        const code = errorCode(call.reply);
        // Arguments that are not an object at all break the request's own shape: -32602 is right there.
        const structural = c.label.startsWith('arguments:');
        if (code !== undefined && !structural) {
          ctx.report({
            leaf: PROTOCOL_ERROR,
            probe: this.id,
            tool: tool.name,
            message: `JSON-RPC error ${code} instead of a result with isError (which the model would see) ${what}`,
            exchange: call.exchange,
            group: `code ${code}`,
          });
        } else ctx.check(PROTOCOL_ERROR);
      }
    }
  },
};

/** Anything on a stdio server's stdout that is not a JSON-RPC message breaks the MUST of the stdio transport. */
export const stdoutCheck: ProbeCheck = {
  id: 'stdout-watch',
  family: 'TOOL',
  leaves: { [POLLUTION]: 'failure' },
  transport: 'stdio',
  run(ctx: CheckContext) {
    for (const peer of ctx.peers) {
      ctx.check(POLLUTION);
      const count = peer.pollutionCount();
      if (count === 0) continue;
      ctx.report({
        leaf: POLLUTION,
        probe: this.id,
        message: `${count} line(s) on stdout were not JSON-RPC, first: ${JSON.stringify(peer.pollution[0]!.slice(0, 200))}`,
        exchange: peer.pollution.slice(0, 3).map((text) => ({ dir: '<' as const, text })),
        group: 'pollution',
      });
    }
  },
};
