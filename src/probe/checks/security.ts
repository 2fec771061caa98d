/**
 * SECURITY — security validation: instruction-like text aimed at the model in descriptions, path
 * traversal through path-like arguments, and the HTTP transport's token, Origin and Host checks.
 * Every finding here is a failure.
 */
import { existsSync } from 'node:fs';
import { validArguments, type JsonSchema } from '../args.js';
import { postRaw, PROBE_PROTOCOL_VERSION, type HttpTarget, type TranscriptLine } from '../peer/index.js';
import { descriptionsOf, instructionLikeText } from '../schema-checks.js';
import { isLocalAddress, isLoopbackAddress } from '../../target-policy.js';
import type { CheckContext, ProbeCheck } from './check.js';

const TRAVERSAL = 'FAULT-SECURITY-PATH-TRAVERSAL';
const PASSWD_CONTENT = /root:[^:\n]*:0:0:/;
const TRAVERSAL_VALUES = ['../../../../../../../../../../etc/passwd', '/etc/passwd', 'file:///etc/passwd'];
const PATH_LIKE = /path|file|dir|folder|uri|root|location/i;

export const descriptionCheck: ProbeCheck = {
  id: 'security-descriptions',
  family: 'SECURITY',
  leaves: { 'FAULT-SECURITY-DESCRIPTION-INJECTION': 'failure' },
  run(ctx) {
    for (const tool of ctx.tools) {
      for (const { where, text } of descriptionsOf(tool)) {
        const hit = instructionLikeText(text);
        if (!hit) {
          ctx.check('FAULT-SECURITY-DESCRIPTION-INJECTION');
          continue;
        }
        ctx.report({
          leaf: 'FAULT-SECURITY-DESCRIPTION-INJECTION',
          probe: this.id,
          tool: tool.name,
          message: `${where} addresses the model: ${JSON.stringify(hit)}`,
          exchange: [{ dir: '<', text: JSON.stringify({ name: tool.name, description: tool.description }) }],
        });
      }
    }
  },
};

/** Path-like arguments given ../ and absolute system paths: /etc/passwd's content must not come back. */
export const traversalCheck: ProbeCheck = {
  id: 'security-traversal',
  family: 'SECURITY',
  leaves: { [TRAVERSAL]: 'failure' },
  callsTools: true,
  async run(ctx) {
    if (!existsSync('/etc/passwd'))
      return ctx.note(TRAVERSAL, 'no /etc/passwd on this machine to look for', 'untested');
    for (const tool of ctx.callable) {
      const props = (tool.inputSchema?.properties ?? {}) as Record<string, JsonSchema>;
      const pathLike = Object.keys(props).filter(
        (name) => PATH_LIKE.test(name) && (props[name]?.type === 'string' || props[name]?.type === undefined),
      );
      for (const name of pathLike) {
        for (const value of TRAVERSAL_VALUES) {
          if (!ctx.timeLeft()) return;
          ctx.progress(`SECURITY: ${tool.name}.${name} = ${value}`);
          const peer = await ctx.session();
          const call = await ctx.callTool(
            peer,
            tool,
            { ...validArguments(tool.inputSchema ?? {}), [name]: value },
            `${name}=${value}`,
          );
          const result = call.reply.message?.result as { isError?: boolean } | undefined;
          if (result && !result.isError && PASSWD_CONTENT.test(JSON.stringify(result))) {
            ctx.report({
              leaf: TRAVERSAL,
              probe: this.id,
              tool: tool.name,
              message: `${name}=${JSON.stringify(value)} was answered with the content of /etc/passwd`,
              exchange: call.exchange,
            });
          } else if (call.outcome === 'answered') ctx.check(TRAVERSAL);
          else {
            // No answer (the server died or hung): nothing shows whether the file would have been read.
            ctx.note(TRAVERSAL, `${tool.name}.${name} got no answer`, 'untested');
            if (call.outcome === 'closed') await ctx.recover(peer, TRAVERSAL);
          }
        }
      }
    }
  },
};

interface HeaderAttempt {
  leaf: string;
  what: string;
  headers: Record<string, string | undefined>;
  /** Why the attempt does not apply to this target, when it does not. */
  notApplicable?: string;
}

function headerAttempts(target: HttpTarget): HeaderAttempt[] {
  const url = new URL(target.url);
  const auth = target.token ? { authorization: `Bearer ${target.token}` } : {};
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // DNS rebinding reaches servers on loopback and private addresses: there a foreign Host must be refused.
  const rebindable = isLoopbackAddress(host) || isLocalAddress(host);
  return [
    {
      leaf: 'FAULT-SECURITY-HTTP-TOKEN',
      what: 'without the bearer token',
      headers: {},
      ...(target.token === undefined
        ? { notApplicable: 'no token given, so the probe cannot tell whether one is required' }
        : {}),
    },
    {
      leaf: 'FAULT-SECURITY-HTTP-ORIGIN',
      what: 'from Origin http://evil.example',
      headers: { ...auth, origin: 'http://evil.example' },
    },
    {
      leaf: 'FAULT-SECURITY-HTTP-HOST',
      what: 'with Host evil.example',
      headers: { ...auth, host: `evil.example:${url.port || (url.protocol === 'https:' ? 443 : 80)}` },
      ...(rebindable
        ? {}
        : { notApplicable: 'the server is not on a loopback or private address, where DNS rebinding matters' }),
    },
  ];
}

/** initialize without the token, from a foreign Origin, with a foreign Host: each must be refused. */
export const httpHeaderCheck: ProbeCheck = {
  id: 'security-http-headers',
  family: 'SECURITY',
  leaves: {
    'FAULT-SECURITY-HTTP-TOKEN': 'failure',
    'FAULT-SECURITY-HTTP-ORIGIN': 'failure',
    'FAULT-SECURITY-HTTP-HOST': 'failure',
  },
  transport: 'http',
  async run(ctx) {
    if (ctx.target.kind !== 'http') return;
    const target = ctx.target;
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 'header-check',
      method: 'initialize',
      params: {
        protocolVersion: PROBE_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'faultline-probe', version: '1' },
      },
    });
    for (const attempt of headerAttempts(target)) {
      if (attempt.notApplicable) {
        ctx.note(attempt.leaf, attempt.notApplicable);
        continue;
      }
      ctx.progress(`SECURITY: initialize ${attempt.what}`);
      const response = await postRaw(target.url, initialize, {
        headers: attempt.headers,
        timeoutMs: ctx.bound(),
        signal: ctx.stopSignal,
        lookup: ctx.lookup,
      });
      ctx.throwIfStopped();
      const shown = Object.entries(attempt.headers)
        .filter(([k]) => k !== 'authorization')
        .map(([k, v]) => `${k}: ${v}`)
        .join(' ');
      const exchange: TranscriptLine[] = [
        { dir: '>', text: `POST ${target.url} ${shown} ${initialize}` },
        { dir: '<', text: `HTTP ${response.status} ${response.body.slice(0, 500)}` },
      ];
      if (response.status >= 200 && response.status < 300) {
        ctx.report({
          leaf: attempt.leaf,
          probe: this.id,
          message: `initialize ${attempt.what} was accepted (HTTP ${response.status})`,
          exchange,
        });
        await endSession(ctx, target, response.headers['mcp-session-id']);
      } else if (response.status === 0) ctx.note(attempt.leaf, `no HTTP answer ${attempt.what}`, 'inconclusive');
      else ctx.check(attempt.leaf);
    }
  },
};

/** Ends a session an attempt was (wrongly) given, so none is left open on the server. */
async function endSession(
  ctx: CheckContext,
  target: HttpTarget,
  session: string | string[] | undefined,
): Promise<void> {
  if (typeof session !== 'string') return;
  const headers = { ...(target.token ? { authorization: `Bearer ${target.token}` } : {}), 'mcp-session-id': session };
  await postRaw(target.url, '', {
    headers,
    timeoutMs: Math.min(2000, ctx.bound()),
    method: 'DELETE',
    signal: ctx.stopSignal,
    lookup: ctx.lookup,
  });
}
