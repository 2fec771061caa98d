/**
 * CONFIG — configuration not enforced: capabilities advertised but not implemented (a failure:
 * a client that trusts them gets -32601), tools.listChanged advertised but no notice when the
 * list changes (a SHOULD: a warning), and read-only tools whose calls changed the tool list (a
 * failure: hosts approve read-only tools without asking the user).
 */
import { errorCode, type ProbeCheck } from './check.js';
import { diffNames, FIRST_SESSION_ENDED, signature, toolsAfterCalls } from './surface.js';

const UNIMPLEMENTED = 'FAULT-CONFIG-CAPABILITY-UNIMPLEMENTED';
const LIST_CHANGED = 'FAULT-CONFIG-LIST-CHANGED';
const ANNOTATION = 'FAULT-CONFIG-ANNOTATION-CONTRADICTED';

/** The method each capability promises, and harmless params for it. */
const METHODS: Record<string, [string, unknown]> = {
  tools: ['tools/list', {}],
  resources: ['resources/list', {}],
  prompts: ['prompts/list', {}],
  logging: ['logging/setLevel', { level: 'info' }],
};

export const capabilitiesCheck: ProbeCheck = {
  id: 'config-capabilities',
  family: 'CONFIG',
  leaves: { [UNIMPLEMENTED]: 'failure' },
  async run(ctx) {
    for (const [capability, [method, params]] of Object.entries(METHODS)) {
      if (!(capability in ctx.capabilities)) continue;
      ctx.progress(`CONFIG: ${method}`);
      const peer = await ctx.session();
      const from = peer.transcript.length;
      const reply = await peer.request(method, params, ctx.bound());
      if (errorCode(reply) === -32601 || reply.timedOut) {
        ctx.report({
          leaf: UNIMPLEMENTED,
          probe: this.id,
          message: `"${capability}" is advertised but ${method} ${reply.timedOut ? 'got no answer' : 'is an unknown method (-32601)'}`,
          exchange: peer.excerpt(from, reply.id),
        });
      } else ctx.check(UNIMPLEMENTED);
    }
  },
};

export const listChangedCheck: ProbeCheck = {
  id: 'config-list-changed',
  family: 'CONFIG',
  leaves: { [LIST_CHANGED]: 'warning' },
  async run(ctx) {
    const after = await toolsAfterCalls(ctx);
    if (!after.tools) return ctx.note(LIST_CHANGED, FIRST_SESSION_ENDED, 'untested');
    const advertised = (ctx.capabilities.tools as { listChanged?: unknown } | undefined)?.listChanged === true;
    if (signature(after.tools) !== signature(ctx.tools) && !after.announced) {
      ctx.report({
        leaf: LIST_CHANGED,
        probe: this.id,
        message:
          `the tool list changed during the session ` +
          `(${diffNames(ctx.tools, after.tools)}) with no ` +
          `notifications/tools/list_changed`,
        exchange: [],
      });
    } else if (advertised && !after.announced) {
      ctx.note(
        LIST_CHANGED,
        'tools.listChanged is advertised but no notice was seen and the ' +
          'list never changed: nothing shows whether it would be sent',
        'inconclusive',
      );
    } else ctx.check(LIST_CHANGED);
  },
};

/** Only the calls of read-only tools can contradict their annotations: with none called (or allowWrites), nothing does.
 * */
export const annotationsCheck: ProbeCheck = {
  id: 'config-annotations',
  family: 'CONFIG',
  leaves: { [ANNOTATION]: 'failure' },
  callsTools: true,
  async run(ctx) {
    if (ctx.settings.allowWrites || ctx.callable.length === 0) return;
    const after = await toolsAfterCalls(ctx);
    if (!after.tools) return ctx.note(ANNOTATION, FIRST_SESSION_ENDED, 'untested');
    if (signature(after.tools) !== signature(ctx.tools) && !after.announced) {
      ctx.report({
        leaf: ANNOTATION,
        probe: this.id,
        message:
          `only readOnlyHint tools were called, yet the tool list changed ` + `(${diffNames(ctx.tools, after.tools)})`,
        exchange: [],
      });
    } else ctx.check(ANNOTATION);
  },
};
