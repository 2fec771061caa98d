/**
 * What several STATE and CONFIG checks compare once the calls are done, computed once per run:
 * the first session's tool list read again, and a second session's.
 */
import { handshake, type Peer, type Reply, type TranscriptLine } from '../peer/index.js';
import type { ListedTool } from '../schema-checks.js';
import type { CheckContext } from './check.js';

export interface AfterCalls {
  /** The first session's tool list after the calls; undefined when that session had ended. */
  tools?: ListedTool[];
  /** Whether the server sent notifications/tools/list_changed on any session. */
  announced: boolean;
}

export interface SecondSession {
  peer: Peer;
  init: Reply;
  tools?: ListedTool[];
  exchange: TranscriptLine[];
}

/** Said of a check that needed the first session's tool list read again, when that session had ended. */
export const FIRST_SESSION_ENDED =
  'the first session ended before its tool list could be read again (the server exited or dropped it)';

export function toolsAfterCalls(ctx: CheckContext): Promise<AfterCalls> {
  return ctx.memo('tools-after-calls', async () => {
    const peer = ctx.current();
    const tools = peer ? await ctx.listTools(peer) : undefined;
    const announced = ctx.peers.some((p) =>
      p.notifications.some((n) => n.method === 'notifications/tools/list_changed'),
    );
    return { ...(tools ? { tools } : {}), announced };
  });
}

export function secondSession(ctx: CheckContext): Promise<SecondSession> {
  return ctx.memo('second-session', async () => {
    ctx.progress('STATE: second session');
    const peer = ctx.open();
    const from = peer.transcript.length;
    const init = await handshake(peer, ctx.bound());
    const tools = init.message?.result ? await ctx.listTools(peer) : undefined;
    return { peer, init, ...(tools ? { tools } : {}), exchange: peer.transcript.slice(from) };
  });
}

/** Tool lists compared by what a client sees of them: names and input schemas. */
export function signature(tools: readonly ListedTool[]): string {
  return JSON.stringify(tools.map((t) => [t.name, t.inputSchema]).sort());
}

export function diffNames(a: readonly ListedTool[], b: readonly ListedTool[]): string {
  const an = new Set(a.map((t) => t.name));
  const bn = new Set(b.map((t) => t.name));
  const gone = [...an].filter((n) => !bn.has(n));
  const added = [...bn].filter((n) => !an.has(n));
  const parts = [
    gone.length ? `gone: ${gone.slice(0, 5).join(', ')}` : '',
    added.length ? `added: ${added.slice(0, 5).join(', ')}` : '',
  ].filter(Boolean);
  return parts.join('; ') || 'same names, different schemas';
}
