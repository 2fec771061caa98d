/**
 * TIMEOUT — timeout and cancellation: a call cancelled while it runs (notifications/cancelled)
 * should stop — no answer, no more progress (SHOULDs: warnings) — and the server must go on
 * answering (a failure if it does not); progress must name a token the probe sent and increase
 * (MUSTs), and a long call given a token should report progress (a warning if it never does).
 */
import { slowArguments, validArguments } from '../args.js';
import type { ListedTool } from '../schema-checks.js';
import type { CheckContext, ProbeCheck } from './check.js';

const CANCEL = 'FAULT-TIMEOUT-CANCEL-IGNORED';
const PROGRESS = 'FAULT-TIMEOUT-PROGRESS';
/** How long after the call the cancel is sent. */
const CANCEL_AFTER_MS = 150;
/** Tools tried before the check gives up finding one still running at the cancel. */
const CANCEL_TRIES = 5;
/** The shortest wait for an answer after the cancel. */
const AFTER_CANCEL_MS = 2000;
/** A call with a token that runs this long should have reported progress. */
const PROGRESS_EXPECTED_MS = 3000;

interface Candidate {
  tool: ListedTool;
  args: unknown;
  /** What the run saw of the tool before: how long it took, whether it answered at all. */
  seenMs: number;
  hung: boolean;
}

/**
 * The tools most likely to be running 150 ms after they are called, first: those with a delay-like
 * argument (asked to run well past the cancel), then those seen to take at least that long (the
 * longest first, answered before hung: a tool that never answers shows little by not answering
 * after a cancel), then the rest. So a tool the run saw hang or run long is always tried.
 */
function candidates(ctx: CheckContext): Candidate[] {
  const all = ctx.callable.map((tool): Candidate & { slow: boolean } => {
    const slow = slowArguments(tool.inputSchema ?? {}, CANCEL_AFTER_MS + 1500);
    const timing = ctx.timings.get(tool.name);
    return {
      tool,
      args: slow ?? validArguments(tool.inputSchema ?? {}),
      slow: slow !== undefined,
      seenMs: timing?.longestMs ?? 0,
      hung: timing?.hung === true,
    };
  });
  const rank = (c: (typeof all)[number]): number =>
    c.slow ? 0 : c.seenMs >= CANCEL_AFTER_MS && !c.hung ? 1 : c.hung ? 2 : 3;
  return all.sort((a, b) => rank(a) - rank(b) || b.seenMs - a.seenMs);
}

export const cancelCheck: ProbeCheck = {
  id: 'timeout-cancel',
  family: 'TIMEOUT',
  leaves: { [CANCEL]: 'warning' },
  callsTools: true,
  async run(ctx) {
    const tried: string[] = [];
    for (const candidate of candidates(ctx)) {
      if (!ctx.timeLeft() || tried.length >= CANCEL_TRIES) break;
      tried.push(candidate.tool.name);
      if (await cancelOnce(ctx, candidate, tried.length, this.id)) return;
    }
    const which =
      tried.length === 0
        ? 'no tool could be called'
        : `none of the tools tried (${tried.join(', ')}) was still running ${CANCEL_AFTER_MS} ms after it was called`;
    ctx.note(CANCEL, `${which}, so no cancellation could be observed`, 'untested');
  },
};

/** Calls the tool, cancels it at CANCEL_AFTER_MS; false when it answered before the cancel could be sent. */
async function cancelOnce(ctx: CheckContext, candidate: Candidate, attempt: number, probe: string): Promise<boolean> {
  const { tool } = candidate;
  ctx.progress(`TIMEOUT: cancelling ${tool.name}`);
  const peer = await ctx.session();
  const from = peer.transcript.length;
  const id = `cancel-${attempt}`;
  const use = ctx.newToken(tool.name);
  const early = await peer.request('tools/call', { name: tool.name, arguments: candidate.args }, CANCEL_AFTER_MS, {
    id,
    progressToken: use.token,
    maxMs: CANCEL_AFTER_MS,
  });
  if (!early.timedOut) {
    use.answeredAt = Date.now();
    return false; // finished (or failed) before a cancel could be sent: this tool cannot show it
  }
  use.cancelled = true;
  await peer.notify('notifications/cancelled', { requestId: id, reason: 'faultline probe: cancellation check' });
  // Long enough for a tool seen to take longer than the minimum to answer anyway, within the per-call bound.
  const wait = Math.min(Math.max(AFTER_CANCEL_MS, candidate.seenMs), ctx.bound());
  const late = await peer.waitFor(id, wait, { maxMs: wait });
  peer.abandon(id);
  use.answeredAt = Date.now();
  const ping = peer.alive() ? await peer.request('ping', {}, ctx.bound()) : undefined;
  const exchange = [...peer.excerpt(from, id), ...(ping ? peer.excerpt(from, ping.id) : [])];
  const report = (message: string, severity?: 'failure'): void =>
    ctx.report({ leaf: CANCEL, probe, tool: tool.name, message, exchange, ...(severity ? { severity } : {}) });
  if (!ping?.message) {
    report('the server stopped answering (ping) after a cancellation', 'failure');
    await ctx.recover(peer, CANCEL);
  } else if (late.message)
    report(
      'the call answered after notifications/cancelled: the work went ' +
        'on, and a client that reuses ids may take the answer for another ' +
        'call',
    );
  else if (late.progress > early.progress)
    report(
      `progress kept coming after notifications/cancelled (${late.progress - early.progress} ` +
        `more within ${wait} ms): the work went on, though no answer came`,
    );
  else ctx.check(CANCEL);
  if (candidate.hung)
    ctx.note(
      CANCEL,
      `checked on ${tool.name}, which also did not answer earlier calls: no answer after the cancel shows little`,
    );
  return true;
}

export const progressCheck: ProbeCheck = {
  id: 'timeout-progress',
  family: 'TIMEOUT',
  leaves: { [PROGRESS]: 'failure' },
  run(ctx) {
    const seen = new Set<string>();
    const last = new Map<string, number>();
    for (const peer of ctx.peers) {
      for (const n of peer.notifications) {
        if (n.method !== 'notifications/progress') continue;
        const params = (n.params ?? {}) as { progressToken?: unknown; progress?: unknown };
        const token = String(params.progressToken);
        const use = ctx.tokens.get(token);
        const evidence = [{ dir: '<' as const, text: JSON.stringify(n).slice(0, 2000) }];
        if (!use) {
          ctx.report({
            leaf: PROGRESS,
            probe: this.id,
            message: `progress for a token the probe never sent: ${JSON.stringify(params.progressToken)?.slice(0, 100)}`,
            exchange: evidence,
            group: 'unknown token',
          });
          continue;
        }
        seen.add(token);
        const before = last.get(token);
        if (typeof params.progress !== 'number' || (before !== undefined && params.progress <= before)) {
          ctx.report({
            leaf: PROGRESS,
            probe: this.id,
            tool: use.tool,
            message: `progress ${JSON.stringify(params.progress)} after ${String(before)}: progress must increase`,
            exchange: evidence,
            group: 'not increasing',
          });
        } else ctx.check(PROGRESS);
        if (typeof params.progress === 'number') last.set(token, params.progress);
      }
    }
    for (const [token, use] of ctx.tokens) {
      if (use.cancelled) continue;
      const ms = (use.answeredAt ?? Date.now()) - use.startedAt;
      if (ms < PROGRESS_EXPECTED_MS) continue;
      if (seen.has(token)) ctx.check(PROGRESS);
      else {
        ctx.report({
          leaf: PROGRESS,
          probe: this.id,
          severity: 'warning',
          tool: use.tool,
          message:
            `a call with a progress token ran ${ms} ms without one progress ` +
            `notification: a host cannot tell it from a hung call`,
          exchange: [],
          group: 'silent',
        });
      }
    }
  },
};
