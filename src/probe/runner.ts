/**
 * runProbe(target, options): drives one MCP server through the probes of the taxonomy and says,
 * per leaf, passed / failed / n/a / inconclusive, each failure with the transcript lines that show
 * it. Safe by default: only tools annotated readOnlyHint are called unless allowWrites; every
 * request is bounded (callTimeoutMs) and so is the whole run (overallTimeoutMs); every process
 * spawned is reaped before this returns, whatever happens.
 */
import { existsSync } from 'node:fs';
import { CancelledError } from '../errors.js';
import { handshake, openPeer, PeerStopped, postRaw, PROBE_PROTOCOL_VERSION, type JsonRpcMessage, type Peer, type Reply, type Target, type TranscriptLine } from './peer.js';
import { hostileCases, slowArguments, validArguments, type JsonSchema } from './args.js';
import { compileSchema, descriptionsOf, instructionLikeText, portabilityIssues, schemaErrors, type ListedTool } from './schema-checks.js';
import { familyOf, type FamilyId, type Taxonomy } from './taxonomy.js';
import { PROBE_DEFAULTS, PROBE_LIMITS } from './limits.js';
import { RUN_RECORD_FORMAT, RUN_RECORD_VERSION, type LeafStatus, type RunRecord } from './record.js';

export interface ProbeOptions {
  /** Hostile cases per tool (TOOL family). */
  cases: number;
  seed: number;
  /** Only these families' probes run (all when undefined or empty). */
  families?: FamilyId[];
  allowWrites: boolean;
  callTimeoutMs: number;
  overallTimeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
}

export { PROBE_DEFAULTS, PROBE_LIMITS };

export interface Finding {
  leaf: string;
  probe: string;
  tool?: string;
  message: string;
  /** The exact JSON-RPC lines ('>' sent, '<' received, '!' observed) that show it. */
  exchange: TranscriptLine[];
}

export interface LeafResult {
  id: string;
  family: FamilyId;
  status: LeafStatus;
  /** How many checks of this leaf ran. */
  checks: number;
  note?: string;
  findings: Finding[];
}

export interface ProbeReport extends RunRecord {
  kind: 'probe';
  target: string;
  transport: 'stdio' | 'http';
  durationMs: number;
  server?: { name?: string; version?: string; protocolVersion?: string; capabilities?: Record<string, unknown> };
  leaves: LeafResult[];
  summary: { passed: number; failed: number; notApplicable: number; inconclusive: number; untested: number; findings: number };
  tools: { listed: number; called: string[]; skipped: string[] };
  /** Set when the server could not be probed at all (no initialize). */
  error?: string;
  /** Set when the target could not even be started (a stdio command that cannot be spawned): the input is wrong, not the server. */
  startError?: string;
}

const EXCHANGE_LINES = 12;

export type ProbeVerdict = 'pass' | 'fail' | 'inconclusive' | 'error';

/**
 * The run's verdict: error (not probed at all), fail (a leaf failed), inconclusive (nothing
 * failed but nothing passed either: a run that tested nothing must not read as a pass), else
 * pass. As with a test runner's skips, untested leaves do not turn a pass into something else;
 * the summary counts them and each says why.
 */
export function probeVerdict(report: Pick<ProbeReport, 'error' | 'summary'>): ProbeVerdict {
  if (report.error) return 'error';
  if (report.summary.failed > 0) return 'fail';
  return report.summary.passed > 0 ? 'pass' : 'inconclusive';
}
/** The probes that call the server's tools (taxonomy.json names them per leaf). */
const CALLING_PROBES: ReadonlySet<string> = new Set(['tool-hostile-args', 'schema-valid-call', 'timeout-cancel', 'timeout-progress', 'security-traversal', 'config-annotations']);
const CANCEL_AFTER_MS = 150;
const PROGRESS_EXPECTED_MS = 3000;
const PASSWD_CONTENT = /root:[^:\n]*:0:0:/;
const TRAVERSAL_VALUES = ['../../../../../../../../../../etc/passwd', '/etc/passwd', 'file:///etc/passwd'];
const PATH_LIKE = /path|file|dir|folder|uri|root|location/i;

class Ledger {
  private readonly results = new Map<string, LeafResult>();
  private readonly probesByLeaf = new Map<string, readonly string[]>();
  constructor(
    taxonomy: Taxonomy,
    selected: (family: FamilyId) => boolean,
  ) {
    for (const leaf of taxonomy.leaves) {
      this.probesByLeaf.set(leaf.id, leaf.probes);
      const family = familyOf(leaf.id)!;
      if (selected(family)) this.results.set(leaf.id, { id: leaf.id, family, status: 'n/a', checks: 0, findings: [] });
    }
  }
  wants(leaf: string): boolean {
    return this.results.has(leaf);
  }
  check(leaf: string, n = 1): void {
    const r = this.results.get(leaf);
    if (r) r.checks += n;
  }
  fail(finding: Finding): void {
    const r = this.results.get(finding.leaf);
    if (!r) return;
    r.checks += 1;
    if (r.findings.length < 20) r.findings.push({ ...finding, exchange: finding.exchange.slice(-EXCHANGE_LINES) });
  }
  /**
   * Nothing could be tested (no initialize): what was seen before says nothing either (a server
   * that exits before it can be initialised did not exit because of the early request). Every
   * selected leaf is untested, with why: coverage must not count such a run as covering nothing
   * applicable.
   */
  untested(why: string): void {
    for (const r of this.results.values()) {
      r.checks = 0;
      r.findings = [];
      r.status = 'untested';
      r.note = why;
    }
  }
  /**
   * The server is gone for good (an HTTP server stopped answering: the probe did not start it and
   * cannot start it again). What was decided stays; every leaf not exercised yet is untested, with
   * why — rather than failed by checks that could only meet a dead server.
   */
  untestedFromNow(why: string, notApplicable: ReadonlySet<string>): void {
    for (const r of this.results.values()) {
      if (r.checks > 0 || r.findings.length > 0 || r.status === 'inconclusive' || notApplicable.has(r.id)) continue;
      r.status = 'untested';
      r.note = r.note ? `${r.note}; ${why}` : why;
    }
  }
  /**
   * Adds a note to a leaf. `inconclusive`: what was seen shows neither a pass nor a fault.
   * `untested`: the leaf applies to this server but this run could not exercise it (the note says
   * why); unless a check ran after all, it stays in coverage's denominator as not exercised,
   * where n/a (the leaf does not apply here) leaves it.
   */
  note(leaf: string, note: string, outcome?: 'inconclusive' | 'untested'): void {
    const r = this.results.get(leaf);
    if (!r) return;
    r.note = r.note ? `${r.note}; ${note}` : note;
    if (outcome === 'inconclusive' || (outcome === 'untested' && r.status !== 'inconclusive')) r.status = outcome;
  }
  /** The leaves exercised only by these probes, for a note on each (see note). */
  leavesOnlyProbedBy(probes: ReadonlySet<string>): string[] {
    return [...this.results.keys()].filter((id) => {
      const own = this.probesByLeaf.get(id) ?? [];
      return own.length > 0 && own.every((probe) => probes.has(probe));
    });
  }
  finish(): LeafResult[] {
    return [...this.results.values()].map((r) => ({
      ...r,
      status:
        r.findings.length > 0 ? 'failed' : r.status === 'inconclusive' ? 'inconclusive' : r.checks > 0 ? 'passed' : r.status === 'untested' ? 'untested' : 'n/a',
    }));
  }
}

/** An HTTP server that did not survive a probe and accepts no new session (see stillThere). */
class ServerGone extends Error {
  constructor(readonly after: string) {
    super(`the server stopped answering after ${after}`);
  }
}

function errorCode(reply: Reply): number | undefined {
  const error = reply.message?.error as { code?: unknown } | undefined;
  return typeof error?.code === 'number' ? error.code : undefined;
}

function describeTarget(target: Target): string {
  return target.kind === 'stdio' ? [target.command, ...target.args].join(' ') : target.url;
}

/** Why a run was stopped before its end: the stop signal's reason. */
const OVERALL_BOUND = 'overall-bound';

/**
 * options.overallTimeoutMs bounds the whole run, stopping the server included: at the bound every
 * wait ends (PeerStopped), HTTP requests are cut, and close() gets only a short grace
 * (peer.ts STOP_GRACE_MS) to stop what the run started — so the run overshoots its bound by
 * that grace at most, and no child, socket or timer outlives it. The leaves not yet probed are
 * untested, with why. A cancelled run (options.signal) stops the same way and throws CancelledError.
 */
export async function runProbe(target: Target, taxonomy: Taxonomy, options: ProbeOptions): Promise<ProbeReport> {
  const started = Date.now();
  const deadline = started + options.overallTimeoutMs;
  const families = options.families && options.families.length > 0 ? new Set(options.families) : undefined;
  const on = (family: FamilyId): boolean => !families || families.has(family);
  const ledger = new Ledger(taxonomy, on);
  const stop = new AbortController();
  const boundTimer = setTimeout(() => stop.abort(OVERALL_BOUND), options.overallTimeoutMs);
  const onCancel = (): void => stop.abort(options.signal?.reason ?? 'cancelled');
  if (options.signal?.aborted) onCancel();
  else options.signal?.addEventListener('abort', onCancel, { once: true });
  /** Ends a check that asked the server directly (postRaw) once the run was stopped. */
  const throwIfStopped = (): void => {
    if (stop.signal.aborted) throw new PeerStopped(stop.signal.reason);
  };
  const peers: Peer[] = [];
  const open = (): Peer => {
    throwIfStopped();
    const peer = openPeer(target, { stop: stop.signal });
    peers.push(peer);
    return peer;
  };
  const progress = options.onProgress ?? (() => undefined);
  const timeLeft = (): boolean => Date.now() < deadline && !stop.signal.aborted;
  const bound = (): number => Math.max(100, Math.min(options.callTimeoutMs, deadline - Date.now()));
  const report: ProbeReport = {
    format: RUN_RECORD_FORMAT,
    version: RUN_RECORD_VERSION,
    kind: 'probe',
    name: `probe ${describeTarget(target)}`.slice(0, 200),
    startedAt: new Date(started).toISOString(),
    taxonomyVersion: taxonomy.version,
    target: describeTarget(target),
    transport: target.kind,
    durationMs: 0,
    leaves: [],
    summary: { passed: 0, failed: 0, notApplicable: 0, inconclusive: 0, untested: 0, findings: 0 },
    tools: { listed: 0, called: [], skipped: [] },
  };

  // Leaves that do not apply to this target stay n/a: stdout is stdio's, a token check needs a token.
  const notApplicable = new Set(['FAULT-TOOL-STDOUT-POLLUTION', ...(target.kind === 'http' && target.token === undefined ? ['FAULT-SECURITY-HTTP-TOKEN'] : [])]);
  let cancelled = false;
  try {
    await probeAll();
  } catch (error) {
    if (error instanceof ServerGone) {
      ledger.untestedFromNow(`the server stopped answering after ${error.after} (and did not accept a new session), so nothing after it was probed`, notApplicable);
    } else if (error instanceof PeerStopped && error.why === OVERALL_BOUND) {
      const why = `the overall bound (${options.overallTimeoutMs} ms) ended the run before this was probed`;
      if (!report.server) {
        // Not even initialized within the bound: nothing was tested, as with any failed initialize.
        ledger.untested(`the server could not be initialized within the overall bound (${options.overallTimeoutMs} ms), so nothing was probed`);
        report.error = `could not initialize the server: no answer within the overall bound (${options.overallTimeoutMs} ms)${peers[0]?.stderrTail() ? `; stderr: ${peers[0].stderrTail().slice(-500)}` : ''}`;
      } else {
        ledger.untestedFromNow(why, notApplicable);
        for (const leaf of ['FAULT-TOOL-CRASH', 'FAULT-TOOL-HANG', 'FAULT-TIMEOUT-CANCEL-IGNORED']) ledger.note(leaf, `the overall bound (${options.overallTimeoutMs} ms) stopped the run early`, 'untested');
      }
    } else if (error instanceof PeerStopped) cancelled = true;
    else throw error;
  } finally {
    clearTimeout(boundTimer);
    options.signal?.removeEventListener('abort', onCancel);
    // At the bound (or once cancelled) only a short grace is left to stop the server.
    const closeBy = stop.signal.aborted ? Date.now() : deadline;
    await Promise.allSettled(peers.map((peer) => peer.close({ deadline: closeBy })));
  }
  if (cancelled) throw new CancelledError('the probe run was cancelled');
  report.leaves = ledger.finish();
  for (const leaf of report.leaves) {
    if (leaf.status === 'passed') report.summary.passed++;
    else if (leaf.status === 'failed') report.summary.failed++;
    else if (leaf.status === 'inconclusive') report.summary.inconclusive++;
    else if (leaf.status === 'untested') report.summary.untested++;
    else report.summary.notApplicable++;
    report.summary.findings += leaf.findings.length;
  }
  report.durationMs = Date.now() - started;
  return report;

  async function probeAll(): Promise<void> {
    // ── Session A: PROTO before and during the handshake ──
    let main = open();
    const mark = (peer: Peer): number => peer.transcript.length;
    const since = (peer: Peer, from: number): TranscriptLine[] => peer.transcript.slice(from);

    progress('PROTO: request before initialize');
    let from = mark(main);
    const early = await main.request('tools/list', {}, Math.min(bound(), 1500), 'before-initialize');
    const earlyExchange = since(main, from);
    const servedEarly = (reply: Reply): boolean => reply.message?.result !== undefined;
    if (ledger.wants('FAULT-PROTO-PRE-INIT')) {
      if (servedEarly(early)) ledger.fail({ leaf: 'FAULT-PROTO-PRE-INIT', probe: 'proto-pre-init', message: 'tools/list was served before initialize', exchange: earlyExchange });
      else if (!main.alive()) ledger.fail({ leaf: 'FAULT-PROTO-PRE-INIT', probe: 'proto-pre-init', message: 'the server exited on a request before initialize', exchange: earlyExchange });
    }
    if (!main.alive()) main = open();

    progress('PROTO: version negotiation');
    from = mark(main);
    let init = await handshake(main, bound(), '1999-01-01');
    const offered = (init.message?.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    if (init.message?.result) {
      if (offered === '1999-01-01' || typeof offered !== 'string') {
        ledger.fail({ leaf: 'FAULT-PROTO-VERSION-NEGOTIATION', probe: 'proto-version', message: `asked for unsupported version 1999-01-01, the server answered ${JSON.stringify(offered)}`, exchange: since(main, from) });
      } else ledger.check('FAULT-PROTO-VERSION-NEGOTIATION');
    } else {
      // An error for an unknown version is not what the spec asks (offer another version) but is not
      // dangerous; start over with a version the server surely knows. No answer at all says nothing.
      if (init.message?.error !== undefined) {
        ledger.note('FAULT-PROTO-VERSION-NEGOTIATION', 'the server refused an unsupported version with an error instead of offering its own');
        ledger.check('FAULT-PROTO-VERSION-NEGOTIATION');
      }
      if (!main.alive() || init.timedOut) main = open();
      from = mark(main);
      init = await handshake(main, bound(), PROBE_PROTOCOL_VERSION);
    }
    const result = init.message?.result as { protocolVersion?: string; capabilities?: Record<string, unknown>; serverInfo?: { name?: string; version?: string } } | undefined;
    if (!result) {
      ledger.untested('the server could not be initialized, so nothing was probed');
      const startError = main.startError();
      if (startError) {
        report.startError = startError;
        report.error = `could not start the command: ${startError}`;
        return;
      }
      // An HTTP request that failed on the connection (refused, reset) says so in the transcript.
      const connectionError = [...main.transcript].reverse().find((line) => line.dir === '!' && line.text.startsWith('HTTP request failed: '))?.text.slice(21);
      const why =
        init.status === 401 || init.status === 403
          ? `it answered HTTP ${init.status} (a token is needed: pass token)`
          : init.timedOut
            ? 'no answer'
            : init.closed && target.kind === 'http' && connectionError !== undefined
              ? `no connection to ${target.url} (${connectionError})`
              : init.closed
                ? `it exited or closed the connection${init.status ? ` (HTTP ${init.status})` : ''}`
                : JSON.stringify(init.message?.error ?? init.message);
      report.error = `could not initialize the server: ${why}${main.stderrTail() ? `; stderr: ${main.stderrTail().slice(-500)}` : ''}`;
      return;
    }
    if (early.timedOut && ledger.wants('FAULT-PROTO-PRE-INIT')) {
      // A slow starter may answer the early request late: that answer counts too.
      const late = await main.waitFor('before-initialize', 1);
      if (servedEarly(late)) ledger.fail({ leaf: 'FAULT-PROTO-PRE-INIT', probe: 'proto-pre-init', message: 'tools/list sent before initialize was served (answered late)', exchange: main.transcript.filter((line) => line.text.includes('"before-initialize"')) });
      else ledger.check('FAULT-PROTO-PRE-INIT');
    } else if (!servedEarly(early) && ledger.wants('FAULT-PROTO-PRE-INIT')) ledger.check('FAULT-PROTO-PRE-INIT');
    const capabilities = result.capabilities ?? {};
    report.server = { name: result.serverInfo?.name, version: result.serverInfo?.version, protocolVersion: result.protocolVersion, capabilities };

    if (on('PROTO')) main = await protoChecks(main);
    if (!main.alive()) main = await reopen();

    progress('listing tools');
    const initialTools = await listTools(main);
    report.tools.listed = initialTools.length;
    const callable = initialTools.filter((tool) => options.allowWrites || tool.annotations?.readOnlyHint === true);
    report.tools.skipped = initialTools.filter((tool) => !callable.includes(tool)).map((tool) => tool.name);
    report.tools.called = callable.map((tool) => tool.name);
    if (callable.length === 0 && initialTools.length > 0) {
      // The server has tools but the probe may call none of them: what only calls exercise applies, untested.
      const why = `none of the ${initialTools.length} tools is annotated readOnlyHint, so none was called (allow_writes calls them)`;
      // Only what calls would have exercised on these tools: output checks need an outputSchema;
      // path traversal and progress apply only to what a call shows, and stay n/a as with calls.
      const withOutputSchema = initialTools.some((tool) => tool.outputSchema !== undefined);
      for (const leaf of ledger.leavesOnlyProbedBy(CALLING_PROBES)) {
        if (leaf.startsWith('FAULT-SCHEMA-') && !withOutputSchema) continue;
        if (leaf === 'FAULT-SECURITY-PATH-TRAVERSAL' || leaf === 'FAULT-TIMEOUT-PROGRESS') continue;
        ledger.note(leaf, why, 'untested');
      }
    }

    // Tools whose outputSchema the probe may not check (not callable): their output leaves apply
    // but stay unexercised unless a callable tool's output is checked (a check makes them pass).
    const uncheckedOutputs = report.tools.skipped.filter((name) => initialTools.some((tool) => tool.name === name && tool.outputSchema !== undefined));
    if (uncheckedOutputs.length > 0 && callable.length > 0) {
      const why = `${uncheckedOutputs.length === 1 ? `${uncheckedOutputs[0]} declares` : `${uncheckedOutputs.length} tools declare`} an outputSchema but ${uncheckedOutputs.length === 1 ? 'is' : 'are'} not annotated readOnlyHint, so ${uncheckedOutputs.length === 1 ? 'its' : 'their'} output was not checked (allow_writes calls ${uncheckedOutputs.length === 1 ? 'it' : 'them'})`;
      for (const leaf of ['FAULT-SCHEMA-MISSING-STRUCTURED', 'FAULT-SCHEMA-OUTPUT-MISMATCH']) ledger.note(leaf, why, 'untested');
    }

    if (on('CONFIG')) await capabilityChecks(main, capabilities);
    if (on('PROVIDER')) providerChecks(initialTools);
    if (on('SECURITY')) descriptionChecks(initialTools);
    const validators = on('SCHEMA') || on('TOOL') || on('TIMEOUT') ? schemaCompileChecks(initialTools) : new Map();

    // Progress tokens we sent, and when their calls answered, for the TIMEOUT-PROGRESS check.
    const tokens = new Map<string, { tool: string; startedAt: number; answeredAt?: number; last?: number; peer: Peer }>();
    let tokenCount = 0;
    const callTool = async (peer: Peer, tool: ListedTool, args: unknown, withProgress: boolean): Promise<{ reply: Reply; ms: number; token?: string }> => {
      const token = withProgress ? `faultline-probe-${++tokenCount}` : undefined;
      const startedAt = Date.now();
      if (token) tokens.set(token, { tool: tool.name, startedAt, peer });
      const params: Record<string, unknown> = { name: tool.name, arguments: args };
      if (token) params._meta = { progressToken: token };
      const reply = await peer.request('tools/call', params, bound());
      if (token) tokens.get(token)!.answeredAt = Date.now();
      return { reply, ms: Date.now() - startedAt, token };
    };

    // ── SCHEMA (and TOOL-HANG): one valid call per callable tool; STATE and CONFIG watch what these calls change ──
    {
      // Tools with an outputSchema whose valid call gave no successful result: their output was never seen.
      const unshownOutputs: string[] = [];
      for (const tool of callable) {
        if (!timeLeft()) break;
        progress(`SCHEMA: valid call of ${tool.name}`);
        if (!main.alive()) main = await reopen();
        from = mark(main);
        const { reply } = await callTool(main, tool, validArguments(tool.inputSchema ?? {}), true);
        const exchange = since(main, from);
        if (reply.closed) {
          if (tool.outputSchema) unshownOutputs.push(tool.name);
          main = await stillThere(main, `the schema-valid call of ${tool.name}`);
          continue;
        }
        if (reply.timedOut) {
          ledger.fail({ leaf: 'FAULT-TOOL-HANG', probe: 'schema-valid-call', tool: tool.name, message: `no answer within ${bound()} ms to a call with schema-valid arguments`, exchange });
          if (tool.outputSchema) unshownOutputs.push(tool.name);
          continue;
        }
        ledger.check('FAULT-TOOL-HANG');
        const res = reply.message?.result as { isError?: boolean; structuredContent?: unknown; content?: unknown } | undefined;
        if (!tool.outputSchema) continue;
        if (!res || res.isError) {
          unshownOutputs.push(tool.name);
          continue;
        }
        const validate = validators.get(tool.name);
        if (res.structuredContent === undefined) {
          ledger.fail({ leaf: 'FAULT-SCHEMA-MISSING-STRUCTURED', probe: 'schema-valid-call', tool: tool.name, message: 'the tool declares an outputSchema but its successful result has no structuredContent', exchange });
          continue;
        }
        ledger.check('FAULT-SCHEMA-MISSING-STRUCTURED');
        if (validate && !validate(res.structuredContent)) {
          ledger.fail({ leaf: 'FAULT-SCHEMA-OUTPUT-MISMATCH', probe: 'schema-valid-call', tool: tool.name, message: `structuredContent breaks the outputSchema: ${schemaErrors(validate)}`, exchange });
        } else if (validate) ledger.check('FAULT-SCHEMA-OUTPUT-MISMATCH');
      }
      if (unshownOutputs.length > 0) {
        // Untested unless another tool's output was checked (a check turns the leaf passed).
        const why = `no successful result to schema-valid arguments from ${unshownOutputs.length === 1 ? unshownOutputs[0] : `${unshownOutputs.length} tools with an outputSchema (${unshownOutputs.slice(0, 5).join(', ')}${unshownOutputs.length > 5 ? ', …' : ''})`}, so its output was not checked`;
        for (const leaf of ['FAULT-SCHEMA-MISSING-STRUCTURED', 'FAULT-SCHEMA-OUTPUT-MISMATCH']) ledger.note(leaf, why, 'untested');
      }
    }

    // ── TOOL: seeded hostile arguments ──
    if (on('TOOL')) {
      let toolIndex = 0;
      for (const tool of callable) {
        const cases = hostileCases(tool.inputSchema ?? {}, options.cases, options.seed + toolIndex++);
        for (const c of cases) {
          if (!timeLeft()) break;
          if (!main.alive()) main = await reopen();
          progress(`TOOL: ${tool.name} with ${c.label}`);
          from = mark(main);
          const { reply } = await callTool(main, tool, c.args, false);
          let exchange = since(main, from);
          const what = `${tool.name} called with ${c.label}`;
          if (reply.closed || !main.alive()) {
            ledger.fail({ leaf: 'FAULT-TOOL-CRASH', probe: 'tool-hostile-args', tool: tool.name, message: `the server ${target.kind === 'stdio' ? 'exited' : 'dropped the connection'} when ${what}`, exchange });
            main = await stillThere(main, 'FAULT-TOOL-CRASH');
            continue;
          }
          ledger.check('FAULT-TOOL-CRASH');
          if (reply.timedOut) {
            ledger.fail({ leaf: 'FAULT-TOOL-HANG', probe: 'tool-hostile-args', tool: tool.name, message: `no answer within ${bound()} ms when ${what}`, exchange });
            continue;
          }
          ledger.check('FAULT-TOOL-HANG');
          const code = errorCode(reply);
          // Arguments that are not an object at all break the request's own shape: -32602 is right there.
          const structural = c.label.startsWith('arguments:');
          if (code !== undefined && !structural) {
            exchange = since(main, from);
            ledger.fail({ leaf: 'FAULT-TOOL-PROTOCOL-ERROR', probe: 'tool-hostile-args', tool: tool.name, message: `JSON-RPC error ${code} instead of an isError result when ${what}`, exchange });
          } else ledger.check('FAULT-TOOL-PROTOCOL-ERROR');
        }
      }
    }

    // ── SECURITY: traversal in path-like arguments ──
    if (on('SECURITY')) await traversalChecks(callable, callTool);

    // ── TIMEOUT: cancellation ──
    if (on('TIMEOUT')) {
      let tried = 0;
      let tested = false;
      // Tools with a delay-like argument first, asked to run well past the cancel; a server that
      // ignores the cancel then answers within the 2 s wait below, which is the finding.
      const slowCalls = callable
        .map((tool) => ({ tool, args: slowArguments(tool.inputSchema ?? {}, CANCEL_AFTER_MS + 1500) }))
        .sort((a, b) => Number(b.args !== undefined) - Number(a.args !== undefined));
      for (const { tool, args } of slowCalls) {
        if (!timeLeft() || tried >= 5) break;
        tried++;
        if (!main.alive()) main = await reopen();
        progress(`TIMEOUT: cancelling ${tool.name}`);
        from = mark(main);
        const token = `faultline-probe-${++tokenCount}`;
        const id = `cancel-${tried}`;
        tokens.set(token, { tool: tool.name, startedAt: Date.now(), peer: main });
        const pending = main.request('tools/call', { name: tool.name, arguments: args ?? validArguments(tool.inputSchema ?? {}), _meta: { progressToken: token } }, CANCEL_AFTER_MS, id);
        const early = await pending;
        if (!early.timedOut) {
          tokens.get(token)!.answeredAt = Date.now();
          continue; // finished before a cancel could be sent: this tool cannot show it
        }
        tested = true;
        await main.notify('notifications/cancelled', { requestId: id, reason: 'faultline probe: cancellation check' });
        const late = await main.waitFor(id, Math.min(2000, bound()));
        tokens.get(token)!.answeredAt = Date.now();
        const ping = await main.request('ping', {}, bound());
        const exchange = since(main, from);
        if (late.message) {
          ledger.fail({ leaf: 'FAULT-TIMEOUT-CANCEL-IGNORED', probe: 'timeout-cancel', tool: tool.name, message: 'the call answered after notifications/cancelled (the work went on)', exchange });
        } else if (!ping.message) {
          ledger.fail({ leaf: 'FAULT-TIMEOUT-CANCEL-IGNORED', probe: 'timeout-cancel', tool: tool.name, message: 'the server stopped answering after a cancellation', exchange });
        } else ledger.check('FAULT-TIMEOUT-CANCEL-IGNORED');
        break;
      }
      if (!tested) ledger.note('FAULT-TIMEOUT-CANCEL-IGNORED', `no callable tool ran longer than ${CANCEL_AFTER_MS} ms, so no cancel could be observed`, 'untested');
      progressChecks(tokens);
    }

    // ── STATE and CONFIG: a second session, and the tool list after our calls ──
    if (on('STATE') || on('CONFIG')) {
      progress('STATE: second session');
      const afterTools = main.alive() ? await listTools(main) : undefined;
      const second = open();
      from = mark(second);
      const init2 = await handshake(second, bound());
      const secondTools = init2.message?.result ? await listTools(second) : undefined;
      const announced = main.notifications.some((n) => n.method === 'notifications/tools/list_changed');
      const sig = (tools: ListedTool[]): string => JSON.stringify(tools.map((t) => [t.name, t.inputSchema]).sort());
      if (secondTools && afterTools) {
        if (sig(secondTools) !== sig(afterTools) && !announced) {
          ledger.fail({ leaf: 'FAULT-STATE-SURFACE-DRIFT', probe: 'state-two-sessions', message: `a second session lists ${secondTools.length} tools (${diffNames(afterTools, secondTools)}) where the first lists ${afterTools.length}`, exchange: since(second, from) });
        } else ledger.check('FAULT-STATE-SURFACE-DRIFT');
      }
      if (afterTools) {
        const changed = sig(afterTools) !== sig(initialTools);
        const advertised = (capabilities.tools as { listChanged?: unknown } | undefined)?.listChanged === true;
        if (changed && !announced) {
          ledger.fail({ leaf: 'FAULT-CONFIG-LIST-CHANGED', probe: 'config-list-changed', message: `the tool list changed during the session (${diffNames(initialTools, afterTools)}) with no notifications/tools/list_changed`, exchange: [] });
          // Only the calls of read-only tools can contradict their annotations; with none called, nothing does.
          if (!options.allowWrites && callable.length > 0) {
            ledger.fail({ leaf: 'FAULT-CONFIG-ANNOTATION-CONTRADICTED', probe: 'config-annotations', message: `only readOnlyHint tools were called, yet the tool list changed (${diffNames(initialTools, afterTools)})`, exchange: [] });
          }
        } else {
          if (!options.allowWrites && callable.length > 0) ledger.check('FAULT-CONFIG-ANNOTATION-CONTRADICTED');
          if (advertised && !announced) ledger.note('FAULT-CONFIG-LIST-CHANGED', 'tools.listChanged is advertised but no notice was seen and the list never changed: nothing shows whether it would be sent', 'inconclusive');
          else ledger.check('FAULT-CONFIG-LIST-CHANGED');
        }
      }
      // A session that ended (the server exited or dropped it) shows no list to compare: the
      // leaves apply to every server with tools, so they are untested, not n/a.
      if (!afterTools) {
        const why = 'the first session ended before its tool list could be read again (the server exited or dropped it)';
        ledger.note('FAULT-STATE-SURFACE-DRIFT', why, 'untested');
        ledger.note('FAULT-CONFIG-LIST-CHANGED', why, 'untested');
        if (!options.allowWrites && callable.length > 0) ledger.note('FAULT-CONFIG-ANNOTATION-CONTRADICTED', why, 'untested');
      } else if (!secondTools) {
        ledger.note('FAULT-STATE-SURFACE-DRIFT', `a second session could not list tools (${init2.timedOut ? 'no answer' : init2.closed ? 'the server exited or closed it' : 'initialize failed'})`, 'untested');
      }
      if (target.kind === 'http' && on('STATE')) await staleSessionChecks(second);
      else await second.close({ deadline });
    }

    if (target.kind === 'http' && on('SECURITY')) await httpHeaderChecks();

    // ── stdout pollution over every stdio session ──
    if (on('TOOL') && target.kind === 'stdio') {
      for (const peer of peers) {
        ledger.check('FAULT-TOOL-STDOUT-POLLUTION');
        if (peer.pollution.length > 0) {
          ledger.fail({ leaf: 'FAULT-TOOL-STDOUT-POLLUTION', probe: 'stdout-watch', message: `${peer.pollution.length} line(s) on stdout were not JSON-RPC, first: ${JSON.stringify(peer.pollution[0]!.slice(0, 200))}`, exchange: peer.pollution.slice(0, 3).map((text) => ({ dir: '<', text })) });
        }
      }
    }
    if (!timeLeft()) {
      for (const leaf of ['FAULT-TOOL-CRASH', 'FAULT-TOOL-HANG', 'FAULT-TIMEOUT-CANCEL-IGNORED']) ledger.note(leaf, `the overall bound (${options.overallTimeoutMs} ms) stopped the run early`, 'untested');
    }
  }

  /**
   * After a probe whose message the server did not survive: a stdio server is started again by
   * the next check; an HTTP one is not the probe's to restart. So for HTTP, a new session is tried
   * at once: the peer to go on with, or ServerGone, which makes every leaf not yet exercised
   * untested — each later check would otherwise only meet a dead server and be failed by it.
   */
  async function stillThere(peer: Peer, afterLeaf: string): Promise<Peer> {
    if (target.kind !== 'http') return peer;
    const again = open();
    const init = await handshake(again, bound(), PROBE_PROTOCOL_VERSION);
    if (!init.message?.result) throw new ServerGone(afterLeaf);
    return again;
  }

  async function reopen(): Promise<Peer> {
    const peer = open();
    await handshake(peer, bound());
    return peer;
  }

  async function listTools(peer: Peer): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const reply = await peer.request('tools/list', cursor ? { cursor } : {}, bound());
      const res = reply.message?.result as { tools?: ListedTool[]; nextCursor?: string } | undefined;
      if (!res || !Array.isArray(res.tools)) break;
      tools.push(...res.tools.filter((t) => t && typeof t.name === 'string'));
      if (!res.nextCursor) break;
      cursor = res.nextCursor;
    }
    return tools;
  }

  async function protoChecks(peer: Peer): Promise<Peer> {
    const since = (from: number): TranscriptLine[] => peer.transcript.slice(from);
    progress('PROTO: ping, unknown method, malformed JSON, invalid request');
    let from = peer.transcript.length;
    const ping = await peer.request('ping', {}, bound());
    const pingResult = ping.message?.result;
    if (!pingResult || typeof pingResult !== 'object' || Object.keys(pingResult).length > 0) {
      ledger.fail({ leaf: 'FAULT-PROTO-PING', probe: 'proto-ping', message: `ping was answered with ${ping.timedOut ? 'nothing' : JSON.stringify(ping.message?.error ?? pingResult)}`, exchange: since(from) });
    } else ledger.check('FAULT-PROTO-PING');

    from = peer.transcript.length;
    const unknown = await peer.request('faultline/no-such-method', {}, bound());
    if (errorCode(unknown) !== -32601) {
      ledger.fail({ leaf: 'FAULT-PROTO-UNKNOWN-METHOD', probe: 'proto-unknown-method', message: `an unknown method got ${unknown.timedOut ? 'no answer' : unknown.message?.result !== undefined ? 'a result' : `error ${String(errorCode(unknown))}`} instead of -32601`, exchange: since(from) });
    } else ledger.check('FAULT-PROTO-UNKNOWN-METHOD');

    // Malformed JSON and an invalid request: the server must survive; if it answers, with the right code.
    const rawChecks: Array<{ leaf: string; probe: string; text: string; code: number; id: number | string | null }> = [
      { leaf: 'FAULT-PROTO-MALFORMED-JSON', probe: 'proto-malformed', text: '{"jsonrpc": "2.0", "id": 9001, "method": "ping", ', code: -32700, id: null },
      { leaf: 'FAULT-PROTO-INVALID-REQUEST', probe: 'proto-invalid-request', text: JSON.stringify({ jsonrpc: '2.0', id: 9002, method: 42, params: 'x' }), code: -32600, id: 9002 },
    ];
    for (const check of rawChecks) {
      if (!peer.alive()) peer = await reopen(); // the previous message killed it: that one is its finding
      from = peer.transcript.length;
      let reply = await peer.sendRaw(check.text, Math.min(bound(), 1000), check.id);
      // Some servers answer an invalid request with id null rather than its id.
      if (!reply.message && check.id !== null && target.kind === 'stdio') reply = await peer.waitFor(null as unknown as string, 50);
      const alive = await peer.request('ping', {}, bound());
      const exchange = since(from);
      const code = errorCode(reply);
      if (!alive.message) {
        ledger.fail({ leaf: check.leaf, probe: check.probe, message: 'the server stopped answering (ping) after this message', exchange });
        peer = await stillThere(peer, check.leaf);
      } else if (reply.message?.result !== undefined) ledger.fail({ leaf: check.leaf, probe: check.probe, message: 'the message was served as a valid request', exchange });
      else if (code !== undefined && code !== check.code) ledger.fail({ leaf: check.leaf, probe: check.probe, message: `answered with error ${code} instead of ${check.code}`, exchange });
      else if (reply.status !== undefined && reply.status >= 500) ledger.fail({ leaf: check.leaf, probe: check.probe, message: `HTTP ${reply.status} (a server error) instead of a 4xx with ${check.code}`, exchange });
      else {
        ledger.check(check.leaf);
        if (code === undefined) ledger.note(check.leaf, `no ${check.code} answer (the server stayed silent but kept working)`);
      }
    }
    return peer;
  }

  async function capabilityChecks(peer: Peer, capabilities: Record<string, unknown>): Promise<void> {
    const methods: Record<string, [string, unknown]> = {
      tools: ['tools/list', {}],
      resources: ['resources/list', {}],
      prompts: ['prompts/list', {}],
      logging: ['logging/setLevel', { level: 'info' }],
    };
    for (const [capability, [method, params]] of Object.entries(methods)) {
      if (!(capability in capabilities)) continue;
      const from = peer.transcript.length;
      const reply = await peer.request(method, params, bound());
      if (errorCode(reply) === -32601 || reply.timedOut) {
        ledger.fail({ leaf: 'FAULT-CONFIG-CAPABILITY-UNIMPLEMENTED', probe: 'config-capabilities', message: `"${capability}" is advertised but ${method} ${reply.timedOut ? 'got no answer' : 'is an unknown method (-32601)'}`, exchange: peer.transcript.slice(from) });
      } else ledger.check('FAULT-CONFIG-CAPABILITY-UNIMPLEMENTED');
    }
  }

  function providerChecks(tools: ListedTool[]): void {
    for (const tool of tools) {
      const issues = portabilityIssues(tool);
      for (const leaf of ['FAULT-PROVIDER-TOOL-NAME', 'FAULT-PROVIDER-UNION-SCHEMA', 'FAULT-PROVIDER-REF-SCHEMA', 'FAULT-PROVIDER-UNSUPPORTED-KEYWORD']) {
        const mine = issues.filter((i) => i.leaf === leaf);
        if (mine.length === 0) ledger.check(leaf);
        for (const issue of mine.slice(0, 3)) {
          ledger.fail({ leaf, probe: 'provider-portability', tool: tool.name, message: issue.message, exchange: [{ dir: '<', text: JSON.stringify({ name: tool.name, inputSchema: tool.inputSchema }) }] });
        }
      }
    }
  }

  function descriptionChecks(tools: ListedTool[]): void {
    for (const tool of tools) {
      for (const { where, text } of descriptionsOf(tool)) {
        const hit = instructionLikeText(text);
        if (hit) {
          ledger.fail({ leaf: 'FAULT-SECURITY-DESCRIPTION-INJECTION', probe: 'security-descriptions', tool: tool.name, message: `${where} addresses the model: ${JSON.stringify(hit)}`, exchange: [{ dir: '<', text: JSON.stringify({ name: tool.name, description: tool.description }) }] });
        } else ledger.check('FAULT-SECURITY-DESCRIPTION-INJECTION');
      }
    }
  }

  function schemaCompileChecks(tools: ListedTool[]): Map<string, NonNullable<ReturnType<typeof compileSchema>['validate']>> {
    const validators = new Map<string, NonNullable<ReturnType<typeof compileSchema>['validate']>>();
    for (const tool of tools) {
      const input = compileSchema(tool.inputSchema);
      const notObject = input.validate && (tool.inputSchema as JsonSchema).type !== 'object';
      if (input.error || notObject) {
        ledger.fail({ leaf: 'FAULT-SCHEMA-INVALID-INPUT-SCHEMA', probe: 'schema-compile', tool: tool.name, message: `inputSchema ${input.error ? `does not compile: ${input.error}` : 'is not of type "object"'}`, exchange: [{ dir: '<', text: JSON.stringify({ name: tool.name, inputSchema: tool.inputSchema }) }] });
      } else ledger.check('FAULT-SCHEMA-INVALID-INPUT-SCHEMA');
      if (tool.outputSchema !== undefined) {
        const output = compileSchema(tool.outputSchema);
        if (output.error) {
          ledger.fail({ leaf: 'FAULT-SCHEMA-INVALID-INPUT-SCHEMA', probe: 'schema-compile', tool: tool.name, message: `outputSchema does not compile: ${output.error}`, exchange: [{ dir: '<', text: JSON.stringify({ name: tool.name, outputSchema: tool.outputSchema }) }] });
        } else validators.set(tool.name, output.validate!);
      }
    }
    return validators;
  }

  async function traversalChecks(
    callable: ListedTool[],
    callTool: (peer: Peer, tool: ListedTool, args: unknown, withProgress: boolean) => Promise<{ reply: Reply }>,
  ): Promise<void> {
    if (!existsSync('/etc/passwd')) {
      ledger.note('FAULT-SECURITY-PATH-TRAVERSAL', 'no /etc/passwd on this machine to look for', 'untested');
      return;
    }
    const unanswered = new Set<string>();
    for (const tool of callable) {
      const props = (tool.inputSchema?.properties ?? {}) as Record<string, JsonSchema>;
      const pathLike = Object.entries(props).filter(([name, s]) => PATH_LIKE.test(name) && (s?.type === 'string' || s?.type === undefined));
      for (const [name] of pathLike) {
        for (const value of TRAVERSAL_VALUES) {
          if (!timeLeft()) return;
          let peer = [...peers].reverse().find((p) => p.alive());
          if (!peer) peer = await reopen();
          progress(`SECURITY: ${tool.name}.${name} = ${value}`);
          const from = peer.transcript.length;
          const { reply } = await callTool(peer, tool, { ...validArguments(tool.inputSchema ?? {}), [name]: value }, false);
          const res = reply.message?.result as { isError?: boolean } | undefined;
          if (res && !res.isError && PASSWD_CONTENT.test(JSON.stringify(res))) {
            ledger.fail({ leaf: 'FAULT-SECURITY-PATH-TRAVERSAL', probe: 'security-traversal', tool: tool.name, message: `${name}=${JSON.stringify(value)} was answered with the content of /etc/passwd`, exchange: peer.transcript.slice(from) });
          } else if (reply.message !== undefined) ledger.check('FAULT-SECURITY-PATH-TRAVERSAL');
          // No answer (the server died or hung): nothing shows whether the file would have been read.
          // (A new session that answers joins `peers`, where the next value's call finds it.)
          else if (reply.closed && target.kind === 'http') await stillThere(peer, 'FAULT-SECURITY-PATH-TRAVERSAL');
          if (reply.message === undefined && !unanswered.has(`${tool.name}.${name}`)) {
            unanswered.add(`${tool.name}.${name}`);
            ledger.note('FAULT-SECURITY-PATH-TRAVERSAL', `${tool.name}.${name} got no answer`, 'untested');
          }
        }
      }
    }
  }

  function progressChecks(tokens: Map<string, { tool: string; startedAt: number; answeredAt?: number; last?: number; peer: Peer }>): void {
    const seen = new Set<string>();
    for (const peer of peers) {
      for (const n of peer.notifications) {
        if (n.method !== 'notifications/progress') continue;
        const params = (n.params ?? {}) as { progressToken?: unknown; progress?: unknown };
        const token = String(params.progressToken);
        const entry = tokens.get(token);
        const evidence = [{ dir: '<' as const, text: JSON.stringify(n) }];
        if (!entry) {
          ledger.fail({ leaf: 'FAULT-TIMEOUT-PROGRESS', probe: 'timeout-progress', message: `progress for a token the probe never sent: ${JSON.stringify(params.progressToken)}`, exchange: evidence });
          continue;
        }
        seen.add(token);
        if (typeof params.progress !== 'number' || (entry.last !== undefined && params.progress <= entry.last)) {
          ledger.fail({ leaf: 'FAULT-TIMEOUT-PROGRESS', probe: 'timeout-progress', tool: entry.tool, message: `progress ${JSON.stringify(params.progress)} after ${String(entry.last)}: progress must increase`, exchange: evidence });
        } else ledger.check('FAULT-TIMEOUT-PROGRESS');
        if (typeof params.progress === 'number') entry.last = params.progress;
      }
    }
    for (const [token, entry] of tokens) {
      const ms = (entry.answeredAt ?? Date.now()) - entry.startedAt;
      if (ms >= PROGRESS_EXPECTED_MS && !seen.has(token)) {
        ledger.fail({ leaf: 'FAULT-TIMEOUT-PROGRESS', probe: 'timeout-progress', tool: entry.tool, message: `a call with a progress token ran ${ms} ms without one progress notification`, exchange: [] });
      } else if (ms >= PROGRESS_EXPECTED_MS) ledger.check('FAULT-TIMEOUT-PROGRESS');
    }
  }

  async function staleSessionChecks(second: Peer): Promise<void> {
    if (target.kind !== 'http') return;
    const headers = (session: string): Record<string, string | undefined> => ({
      'mcp-session-id': session,
      'mcp-protocol-version': PROBE_PROTOCOL_VERSION,
      ...(target.token ? { authorization: `Bearer ${target.token}` } : {}),
    });
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 'stale-session', method: 'ping' });
    const probe = async (session: string, what: string): Promise<void> => {
      const response = await postRaw(target.url, ping, headers(session), bound(), undefined, 'POST', stop.signal);
      throwIfStopped();
      const exchange: TranscriptLine[] = [
        { dir: '>', text: `POST ${target.url} mcp-session-id: ${session} ${ping}` },
        { dir: '<', text: `HTTP ${response.status} ${response.body.slice(0, 500)}` },
      ];
      if (response.status >= 200 && response.status < 300 && response.messages.some((m) => 'result' in m)) {
        ledger.fail({ leaf: 'FAULT-STATE-STALE-SESSION', probe: 'state-stale-session', message: `a request with ${what} session id was served`, exchange });
      } else ledger.check('FAULT-STATE-STALE-SESSION');
    };
    await probe('faultline-probe-no-such-session', 'an unknown');
    const old = second.sessionId();
    await second.close({ deadline });
    if (old) await probe(old, 'a terminated (DELETE)');
  }

  async function httpHeaderChecks(): Promise<void> {
    if (target.kind !== 'http') return;
    const url = new URL(target.url);
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 'header-check', method: 'initialize', params: { protocolVersion: PROBE_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'faultline-probe', version: '1' } } });
    const auth = target.token ? { authorization: `Bearer ${target.token}` } : {};
    const loopback = ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(url.hostname) || /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(url.hostname);
    const attempts: Array<{ leaf: string; what: string; headers: Record<string, string | undefined>; applies: boolean; why?: string }> = [
      { leaf: 'FAULT-SECURITY-HTTP-TOKEN', what: 'without the bearer token', headers: {}, applies: target.token !== undefined, why: 'no --token given, so the probe cannot tell whether one is required' },
      { leaf: 'FAULT-SECURITY-HTTP-ORIGIN', what: 'from Origin http://evil.example', headers: { ...auth, origin: 'http://evil.example' }, applies: true },
      { leaf: 'FAULT-SECURITY-HTTP-HOST', what: 'with Host evil.example', headers: { ...auth, host: `evil.example:${url.port || (url.protocol === 'https:' ? 443 : 80)}` }, applies: loopback, why: 'the server is not on a loopback or private address, where DNS rebinding matters' },
    ];
    for (const attempt of attempts) {
      if (!attempt.applies) {
        ledger.note(attempt.leaf, attempt.why ?? 'not applicable');
        continue;
      }
      progress(`SECURITY: initialize ${attempt.what}`);
      const response = await postRaw(target.url, initialize, attempt.headers, bound(), undefined, 'POST', stop.signal);
      throwIfStopped();
      const exchange: TranscriptLine[] = [
        { dir: '>', text: `POST ${target.url} ${Object.entries(attempt.headers).filter(([k]) => k !== 'authorization').map(([k, v]) => `${k}: ${v}`).join(' ')} ${initialize}` },
        { dir: '<', text: `HTTP ${response.status} ${response.body.slice(0, 500)}` },
      ];
      if (response.status >= 200 && response.status < 300) {
        ledger.fail({ leaf: attempt.leaf, probe: 'security-http-headers', message: `initialize ${attempt.what} was accepted (HTTP ${response.status})`, exchange });
        const session = response.headers['mcp-session-id'];
        if (typeof session === 'string') await postRaw(target.url, '', { ...auth, 'mcp-session-id': session }, Math.min(2000, bound()), undefined, 'DELETE', stop.signal);
      } else if (response.status === 0) ledger.note(attempt.leaf, `no HTTP answer ${attempt.what}`, 'inconclusive');
      else ledger.check(attempt.leaf);
    }
  }
}

function diffNames(a: ListedTool[], b: ListedTool[]): string {
  const an = new Set(a.map((t) => t.name));
  const bn = new Set(b.map((t) => t.name));
  const gone = [...an].filter((n) => !bn.has(n));
  const added = [...bn].filter((n) => !an.has(n));
  const parts = [gone.length ? `gone: ${gone.slice(0, 5).join(', ')}` : '', added.length ? `added: ${added.slice(0, 5).join(', ')}` : ''].filter(Boolean);
  return parts.join('; ') || 'same names, different schemas';
}

export type { JsonRpcMessage };
