/**
 * STATE — state management: what one session changed shows up in another without notice, and an
 * HTTP session id that is unknown or was terminated (DELETE) is refused (404 is a MUST).
 */
import { postRaw, PROBE_PROTOCOL_VERSION, type TranscriptLine } from '../peer/index.js';
import type { CheckContext, ProbeCheck } from './check.js';
import { diffNames, FIRST_SESSION_ENDED, secondSession, signature, toolsAfterCalls } from './surface.js';

const DRIFT = 'FAULT-STATE-SURFACE-DRIFT';
const STALE = 'FAULT-STATE-STALE-SESSION';

/**
 * A second session listing other tools than the first, with no list_changed notice, is state
 * leaking between sessions — or tools chosen per session on purpose, which no rule forbids: a warning.
 */
export const twoSessionsCheck: ProbeCheck = {
  id: 'state-two-sessions',
  family: 'STATE',
  leaves: { [DRIFT]: 'warning' },
  async run(ctx) {
    const after = await toolsAfterCalls(ctx);
    if (!after.tools) return ctx.note(DRIFT, FIRST_SESSION_ENDED, 'untested');
    const second = await secondSession(ctx);
    if (!second.tools) {
      const why = second.init.timedOut
        ? 'no answer'
        : second.init.closed
          ? 'the server exited or closed it'
          : 'initialize failed';
      return ctx.note(DRIFT, `a second session could not list tools (${why})`, 'untested');
    }
    if (signature(second.tools) !== signature(after.tools) && !after.announced) {
      ctx.report({
        leaf: DRIFT,
        probe: this.id,
        message:
          `a second session lists ${second.tools.length} tools ` +
          `(${diffNames(after.tools, second.tools)}) where the first lists ` +
          `${after.tools.length}, with no notifications/tools/list_changed`,
        exchange: second.exchange,
      });
    } else ctx.check(DRIFT);
  },
};

export const staleSessionCheck: ProbeCheck = {
  id: 'state-stale-session',
  family: 'STATE',
  leaves: { [STALE]: 'failure' },
  transport: 'http',
  async run(ctx) {
    if (ctx.target.kind !== 'http') return;
    const second = await secondSession(ctx);
    await askWithSession(ctx, 'faultline-probe-no-such-session', 'an unknown', this.id);
    const old = second.peer.sessionId();
    await second.peer.close({ deadline: Date.now() + ctx.bound() });
    if (old) await askWithSession(ctx, old, 'a terminated (DELETE)', this.id);
  },
};

/** A ping with `session` as its session id: served is a finding. */
async function askWithSession(ctx: CheckContext, session: string, what: string, probe: string): Promise<void> {
  if (ctx.target.kind !== 'http') return;
  const { url, token } = ctx.target;
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 'stale-session', method: 'ping' });
  const headers = {
    'mcp-session-id': session,
    'mcp-protocol-version': PROBE_PROTOCOL_VERSION,
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const response = await postRaw(url, ping, {
    headers,
    timeoutMs: ctx.bound(),
    signal: ctx.stopSignal,
    lookup: ctx.lookup,
  });
  ctx.throwIfStopped();
  const exchange: TranscriptLine[] = [
    { dir: '>', text: `POST ${url} mcp-session-id: ${session} ${ping}` },
    { dir: '<', text: `HTTP ${response.status} ${response.body.slice(0, 500)}` },
  ];
  if (response.status >= 200 && response.status < 300 && response.messages.some((m) => 'result' in m)) {
    ctx.report({ leaf: STALE, probe, message: `a request with ${what} session id was served`, exchange });
  } else ctx.check(STALE);
}
