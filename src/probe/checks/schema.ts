/**
 * SCHEMA — schema enforcement: the schemas a server publishes compile as JSON Schema, and a
 * successful result of a tool with an outputSchema carries structuredContent that matches it (both
 * MUSTs of the specification). The schema-valid call of each tool also decides TOOL-HANG for
 * arguments the tool accepts.
 */
import { validArguments, type JsonSchema } from '../args.js';
import { compileSchema, schemaErrors, type ListedTool } from '../schema-checks.js';
import type { CheckContext, ProbeCheck } from './check.js';
import { hangMessage } from './tool.js';

const INVALID_SCHEMA = 'FAULT-SCHEMA-INVALID-INPUT-SCHEMA';
const MISMATCH = 'FAULT-SCHEMA-OUTPUT-MISMATCH';
const MISSING = 'FAULT-SCHEMA-MISSING-STRUCTURED';
const HANG = 'FAULT-TOOL-HANG';

export const schemaCompileCheck: ProbeCheck = {
  id: 'schema-compile',
  family: 'SCHEMA',
  leaves: { [INVALID_SCHEMA]: 'failure' },
  run(ctx) {
    for (const tool of ctx.tools) {
      const input = compileSchema(tool.inputSchema);
      const notObject = input.validate !== undefined && (tool.inputSchema as JsonSchema).type !== 'object';
      if (input.error || notObject) {
        ctx.report({
          leaf: INVALID_SCHEMA,
          probe: this.id,
          tool: tool.name,
          message: `inputSchema ${input.error ? `does not compile: ${input.error}` : 'is not of type "object"'}`,
          exchange: [{ dir: '<', text: JSON.stringify({ name: tool.name, inputSchema: tool.inputSchema }) }],
          ...(notObject ? { group: 'not an object' } : {}),
        });
      } else ctx.check(INVALID_SCHEMA);
      if (tool.outputSchema !== undefined && ctx.outputValidator(tool) === undefined) {
        ctx.report({
          leaf: INVALID_SCHEMA,
          probe: this.id,
          tool: tool.name,
          message: `outputSchema does not compile: ${compileSchema(tool.outputSchema).error}`,
          exchange: [{ dir: '<', text: JSON.stringify({ name: tool.name, outputSchema: tool.outputSchema }) }],
        });
      }
    }
  },
};

/**
 * One call with schema-valid arguments per callable tool. A call that keeps sending progress is
 * waited for (up to the run's bound); one silent for a whole per-call bound is a hang.
 */
export const validCallCheck: ProbeCheck = {
  id: 'schema-valid-call',
  family: 'SCHEMA',
  leaves: { [MISMATCH]: 'failure', [MISSING]: 'failure', [HANG]: 'failure' },
  callsTools: true,
  // What the calls change, how long they take and what progress they send is judged by others.
  feeds: [
    'FAULT-STATE-SURFACE-DRIFT',
    'FAULT-CONFIG-LIST-CHANGED',
    'FAULT-CONFIG-ANNOTATION-CONTRADICTED',
    'FAULT-TIMEOUT-PROGRESS',
    'FAULT-TIMEOUT-CANCEL-IGNORED',
  ],
  async run(ctx) {
    // Tools with an outputSchema whose valid call gave no successful result: their output was never seen.
    const unshown: string[] = [];
    for (const tool of ctx.callable) {
      if (!ctx.timeLeft()) break;
      ctx.progress(`SCHEMA: valid call of ${tool.name}`);
      const seen = await validCall(ctx, tool, this.id);
      if (!seen && tool.outputSchema) unshown.push(tool.name);
    }
    if (unshown.length > 0) {
      // Untested unless another tool's output was checked (a check turns the leaf passed).
      const which =
        unshown.length === 1
          ? unshown[0]
          : `${unshown.length} tools with an outputSchema ` +
            `(${unshown.slice(0, 5).join(', ')}${unshown.length > 5 ? ', …' : ''})`;
      for (const leaf of [MISSING, MISMATCH])
        ctx.note(
          leaf,
          `no successful result to schema-valid arguments from ${which}, so its output was not checked`,
          'untested',
        );
    }
  },
};

/** One schema-valid call; true when a successful result of a tool with an outputSchema was checked. */
async function validCall(ctx: CheckContext, tool: ListedTool, probe: string): Promise<boolean> {
  const peer = await ctx.session();
  const bound = ctx.bound();
  const call = await ctx.callTool(peer, tool, validArguments(tool.inputSchema ?? {}), 'schema-valid arguments');
  if (call.outcome === 'closed') {
    await ctx.recover(peer, `the schema-valid call of ${tool.name}`);
    return false;
  }
  if (call.outcome === 'hung') {
    ctx.report({
      leaf: HANG,
      probe,
      tool: tool.name,
      message: hangMessage(call, bound, 'to a call with schema-valid arguments'),
      exchange: call.exchange,
      group: 'valid',
    });
    return false;
  }
  ctx.check(HANG);
  const result = call.reply.message?.result as { isError?: boolean; structuredContent?: unknown } | undefined;
  if (!tool.outputSchema || !result || result.isError) return false;
  if (result.structuredContent === undefined) {
    ctx.report({
      leaf: MISSING,
      probe,
      tool: tool.name,
      message: 'the tool declares an outputSchema but its successful result has no structuredContent',
      exchange: call.exchange,
      group: 'missing',
    });
    return true;
  }
  ctx.check(MISSING);
  const validate = ctx.outputValidator(tool);
  if (validate && !validate(result.structuredContent)) {
    ctx.report({
      leaf: MISMATCH,
      probe,
      tool: tool.name,
      message: `structuredContent breaks the outputSchema: ${schemaErrors(validate)}`,
      exchange: call.exchange,
    });
  } else if (validate) ctx.check(MISMATCH);
  return true;
}
