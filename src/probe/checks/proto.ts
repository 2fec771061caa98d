/**
 * PROTO — protocol interaction: the lifecycle (a request before initialize, version negotiation),
 * ping, error codes for unknown methods, malformed JSON and invalid requests, and whether every
 * message the server sent could be read at all.
 */
import type { Peer, TranscriptLine } from '../peer/index.js';
import { describeAnswer, errorCode, type ProbeCheck } from './check.js';

const PRE_INIT = 'FAULT-PROTO-PRE-INIT';
const VERSION = 'FAULT-PROTO-VERSION-NEGOTIATION';
const UNREADABLE = 'FAULT-PROTO-UNREADABLE-MESSAGE';

/**
 * Serving a request before initialize breaks no MUST (the specification asks clients not to send
 * one, and a server may refuse it with an error): a warning. Dying of it is a crash.
 */
export const preInitCheck: ProbeCheck = {
  id: 'proto-pre-init',
  family: 'PROTO',
  leaves: { [PRE_INIT]: 'warning' },
  async run(ctx) {
    const { early } = ctx.start;
    const exchange = (): TranscriptLine[] => early.peer.excerpt(early.from, early.id);
    if (early.killed) {
      ctx.report({
        leaf: PRE_INIT,
        probe: this.id,
        severity: 'failure',
        message: 'the server exited on a request sent before initialize',
        exchange: exchange(),
      });
      return;
    }
    let reply = early.reply;
    // A slow starter may answer the early request late: that answer counts too.
    if (reply.timedOut && early.peer.alive()) reply = await early.peer.waitFor(early.id, 1);
    if (reply.message?.result !== undefined) {
      ctx.report({
        leaf: PRE_INIT,
        probe: this.id,
        message:
          `tools/list sent before initialize was ` +
          `served${early.reply.timedOut ? ' (answered late)' : ''}: clients ` +
          `should not send it, but a server that serves it lets a client ` +
          `skip the version and capability handshake`,
        exchange: exchange(),
      });
    } else ctx.check(PRE_INIT);
  },
};

/** The server must answer an unsupported version with one it supports (a MUST). */
export const versionCheck: ProbeCheck = {
  id: 'proto-version',
  family: 'PROTO',
  leaves: { [VERSION]: 'failure' },
  run(ctx) {
    const { reply, exchange } = ctx.start.negotiation;
    const result = reply.message?.result as { protocolVersion?: unknown } | undefined;
    if (result) {
      const offered = result.protocolVersion;
      if (offered === '1999-01-01' || typeof offered !== 'string') {
        ctx.report({
          leaf: VERSION,
          probe: this.id,
          message: `asked for unsupported version 1999-01-01, the server answered ${JSON.stringify(offered)}`,
          exchange,
        });
      } else ctx.check(VERSION);
    } else if (reply.message?.error !== undefined) {
      // Not what the specification asks (offer another version), but a client learns as much.
      ctx.note(VERSION, 'the server refused an unsupported version with an error instead of offering its own');
      ctx.check(VERSION);
    } else ctx.note(VERSION, `initialize with an unsupported version got ${describeAnswer(reply)}`, 'untested');
  },
};

export const pingCheck: ProbeCheck = {
  id: 'proto-ping',
  family: 'PROTO',
  leaves: { 'FAULT-PROTO-PING': 'failure' },
  async run(ctx) {
    ctx.progress('PROTO: ping');
    const peer = await ctx.session();
    const from = peer.transcript.length;
    const ping = await peer.request('ping', {}, ctx.bound());
    const result = ping.message?.result;
    if (!result || typeof result !== 'object' || Object.keys(result).length > 0) {
      const what = result ? JSON.stringify(result).slice(0, 200) : describeAnswer(ping);
      ctx.report({
        leaf: 'FAULT-PROTO-PING',
        probe: this.id,
        message: `ping was answered with ${what}, not an empty result`,
        exchange: peer.excerpt(from, ping.id),
      });
    } else ctx.check('FAULT-PROTO-PING');
  },
};

/** A result for an unknown method, or no answer, breaks JSON-RPC; another error code only misleads. */
export const unknownMethodCheck: ProbeCheck = {
  id: 'proto-unknown-method',
  family: 'PROTO',
  leaves: { 'FAULT-PROTO-UNKNOWN-METHOD': 'failure' },
  async run(ctx) {
    ctx.progress('PROTO: an unknown method');
    const peer = await ctx.session();
    const from = peer.transcript.length;
    const reply = await peer.request('faultline/no-such-method', {}, ctx.bound());
    const code = errorCode(reply);
    if (code === -32601) return ctx.check('FAULT-PROTO-UNKNOWN-METHOD');
    ctx.report({
      leaf: 'FAULT-PROTO-UNKNOWN-METHOD',
      probe: this.id,
      severity: code !== undefined ? 'warning' : 'failure',
      message: `an unknown method got ${describeAnswer(reply)} instead of error -32601`,
      exchange: peer.excerpt(from, reply.id),
    });
  },
};

interface RawCase {
  id: string;
  leaf: string;
  text: string;
  code: number;
  awaitId: number | string | null;
}

/**
 * A message the server must survive: if it answers, with the right code. Dying or stopping to
 * answer is a failure, and so is serving it; a wrong code or an HTTP 5xx is a warning.
 */
function rawCheck(raw: RawCase): ProbeCheck {
  return {
    id: raw.id,
    family: 'PROTO',
    leaves: { [raw.leaf]: 'failure' },
    async run(ctx) {
      ctx.progress(`PROTO: ${raw.id}`);
      const peer: Peer = await ctx.session();
      const from = peer.transcript.length;
      let reply = await peer.sendRaw(raw.text, Math.min(ctx.bound(), 1000), raw.awaitId);
      // Some servers answer an invalid request with id null rather than its id.
      if (!reply.message && raw.awaitId !== null && ctx.target.kind === 'stdio') reply = await peer.waitFor(null, 50);
      const alive = peer.alive() ? await peer.request('ping', {}, ctx.bound()) : undefined;
      const exchange = [...peer.excerpt(from, raw.awaitId), ...(alive ? peer.excerpt(from, alive.id) : [])];
      const code = errorCode(reply);
      const report = (message: string, severity?: 'warning'): void =>
        ctx.report({ leaf: raw.leaf, probe: raw.id, message, exchange, ...(severity ? { severity } : {}) });
      if (!alive?.message) {
        report('the server stopped answering (ping) after this message');
        await ctx.recover(peer, raw.leaf);
      } else if (reply.message?.result !== undefined) report('the message was served as a valid request');
      else if (code !== undefined && code !== raw.code)
        report(`answered with error ${code} instead of ${raw.code}`, 'warning');
      else if (reply.status !== undefined && reply.status >= 500)
        report(`HTTP ${reply.status} (a server error) instead of a 4xx with ${raw.code}`, 'warning');
      else {
        ctx.check(raw.leaf);
        if (code === undefined) ctx.note(raw.leaf, `no ${raw.code} answer (the server stayed silent but kept working)`);
      }
    },
  };
}

export const malformedJsonCheck = rawCheck({
  id: 'proto-malformed',
  leaf: 'FAULT-PROTO-MALFORMED-JSON',
  text: '{"jsonrpc": "2.0", "id": 9001, "method": "ping", ',
  code: -32700,
  awaitId: null,
});

export const invalidRequestCheck = rawCheck({
  id: 'proto-invalid-request',
  leaf: 'FAULT-PROTO-INVALID-REQUEST',
  text: JSON.stringify({ jsonrpc: '2.0', id: 9002, method: 42, params: 'x' }),
  code: -32600,
  awaitId: 9002,
});

/**
 * Every message the server sent during the run, read within the probe's bounds: invalid JSON
 * breaks JSON-RPC (a failure); a message over a bound (too large, nested too deep, a flood) is one
 * many clients cannot read either (a warning). Runs last, over every session.
 */
export const unreadableCheck: ProbeCheck = {
  id: 'proto-unreadable',
  family: 'PROTO',
  leaves: { [UNREADABLE]: 'failure' },
  run(ctx) {
    for (const peer of ctx.peers) {
      ctx.check(UNREADABLE);
      for (const message of peer.unreadable) {
        const exchange: TranscriptLine[] = [
          ...(message.excerpt ? [{ dir: '<' as const, text: message.excerpt }] : []),
          { dir: '!', text: message.problem },
        ];
        ctx.report({
          leaf: UNREADABLE,
          probe: this.id,
          severity: message.kind === 'invalid' ? 'failure' : 'warning',
          message:
            message.kind === 'invalid'
              ? `the server sent a message that is not valid JSON-RPC: ${message.problem}`
              : `the server sent a message over the probe's bounds: ${message.problem}`,
          exchange,
          group: message.kind === 'invalid' ? 'invalid' : message.problem.replace(/\d+/g, 'N'),
        });
      }
    }
  },
};

export const PROTO_CHECKS: readonly ProbeCheck[] = [
  preInitCheck,
  versionCheck,
  pingCheck,
  unknownMethodCheck,
  malformedJsonCheck,
  invalidRequestCheck,
];
