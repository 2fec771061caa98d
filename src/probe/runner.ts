/**
 * runProbe(target, taxonomy, options): drives one MCP server through the probe checks
 * (checks/index.ts) and says, per leaf, passed / failed / warning / n/a / inconclusive /
 * untested, each finding with the transcript lines that show it. Safe by default: only tools
 * annotated readOnlyHint are called unless allowWrites; every request is bounded (callTimeoutMs,
 * restarted by progress) and so is the whole run (overallTimeoutMs); every process spawned, and
 * whatever it started, is ended before this returns, whatever happens.
 */
import type { ProgramPolicy } from '../consent/index.js';
import type { LookupFunction } from 'node:net';
import { CancelledError } from '../kernel/errors.js';
import { targetLookup } from '../target-policy.js';
import { CHECKS, ServerGone, type ProbeCheck } from './checks/index.js';
import { Ledger, type Severity } from './findings.js';
import { PROBE_DEFAULTS, PROBE_LIMITS } from './limits.js';
import { handshake, PeerStopped, PROBE_PROTOCOL_VERSION, type Peer, type Target } from './peer/index.js';
import { emptyReport, summarise, type ProbeReport } from './report.js';
import { ProbeRun } from './run-context.js';
import type { FamilyId, Taxonomy } from './taxonomy.js';
import { refuseInProduction } from '../production.js';

export interface ProbeOptions {
  /** Hostile cases per tool (TOOL family). */
  cases: number;
  seed: number;
  /** Only these families' probes run (all when undefined or empty). */
  families?: FamilyId[];
  allowWrites: boolean;
  /** With allowWrites: call tools that write even where the environment says production (--allow-production). */
  allowProduction?: boolean;
  callTimeoutMs: number;
  overallTimeoutMs: number;
  /**
   * HTTP: resolves the target's name at every connect — the target policy's lookup, which refuses
   * what the policy refuses after resolution. Default: the policy's default (targetLookup(false)).
   * The URL's own host is the caller's to check first (checkLoadTarget), as Node does not look up
   * an address given as an IP.
   */
  lookup?: LookupFunction;
  /** Whether the stdio server may be started (src/consent): the owner's policy at the shell, an agent's over MCP. */
  programs: ProgramPolicy;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
}

export { PROBE_DEFAULTS, PROBE_LIMITS };
export { probeVerdict, type ProbeReport, type ProbeVerdict } from './report.js';
export type { Finding, LeafResult, Severity } from './findings.js';

/** Why a run was stopped before its end: the stop signal's reason. */
const OVERALL_BOUND = 'overall-bound';
/** How long the request sent before initialize is waited for. */
const EARLY_WAIT_MS = 1500;
const STOPPED_EARLY = ['FAULT-TOOL-CRASH', 'FAULT-TOOL-HANG', 'FAULT-TIMEOUT-CANCEL-IGNORED'];

/** Each leaf's severity, as the checks that decide it declare (a failure wins over a warning). */
function leafSeverities(checks: readonly ProbeCheck[]): Map<string, Severity> {
  const severities = new Map<string, Severity>();
  for (const check of checks) {
    for (const [leaf, severity] of Object.entries(check.leaves))
      if (severities.get(leaf) !== 'failure') severities.set(leaf, severity);
  }
  return severities;
}

/**
 * options.overallTimeoutMs bounds the whole run, stopping the server included: at the bound every
 * wait ends (PeerStopped), HTTP requests are cut, and close() gets only a short grace
 * (STOP_GRACE_MS) to end what the run started — so the run overshoots its bound by that grace at
 * most, and no process, socket or timer outlives it. The leaves not yet probed are untested, with
 * why. A cancelled run (options.signal) stops the same way and throws CancelledError.
 */
export async function runProbe(target: Target, taxonomy: Taxonomy, options: ProbeOptions): Promise<ProbeReport> {
  // Calling tools that write changes the server under test: injecting, for the production guard.
  if (options.allowWrites) refuseInProduction('call tools that write', options.allowProduction === true);
  const started = Date.now();
  const families = options.families && options.families.length > 0 ? new Set(options.families) : undefined;
  const severities = leafSeverities(CHECKS);
  const ledger = new Ledger(
    taxonomy,
    (family) => !families || families.has(family),
    (leaf) => severities.get(leaf) ?? 'failure',
  );
  const stop = new AbortController();
  const boundTimer = setTimeout(() => stop.abort(OVERALL_BOUND), options.overallTimeoutMs);
  const onCancel = (): void => stop.abort(options.signal?.reason ?? 'cancelled');
  if (options.signal?.aborted) onCancel();
  else options.signal?.addEventListener('abort', onCancel, { once: true });
  const lookup = target.kind === 'http' ? (options.lookup ?? targetLookup(false)) : undefined;
  const settings = {
    cases: options.cases,
    seed: options.seed,
    allowWrites: options.allowWrites,
    callTimeoutMs: options.callTimeoutMs,
    overallTimeoutMs: options.overallTimeoutMs,
  };
  const run = new ProbeRun(
    target,
    settings,
    ledger,
    started + options.overallTimeoutMs,
    stop,
    lookup,
    options.onProgress ?? (() => undefined),
    options.programs,
  );
  const report = emptyReport(target, taxonomy, started);
  // Leaves that do not apply to this target stay n/a: stdout is stdio's, a token check needs a token.
  const notApplicable = new Set([
    'FAULT-TOOL-STDOUT-POLLUTION',
    ...(target.kind === 'http' && target.token === undefined ? ['FAULT-SECURITY-HTTP-TOKEN'] : []),
  ]);
  let cancelled = false;
  try {
    if (await startSession(run, report)) {
      await learnSurface(run, report);
      await runChecks(run);
    }
  } catch (error) {
    if (error instanceof ServerGone) {
      ledger.untestedFromNow(
        `the server stopped answering after ${error.after} (and did not ` +
          `accept a new session), so nothing after it was probed`,
        notApplicable,
      );
    } else if (error instanceof PeerStopped && error.why === OVERALL_BOUND) {
      stoppedByBound(run, report, ledger, options.overallTimeoutMs, notApplicable);
    } else if (error instanceof PeerStopped) cancelled = true;
    else throw error;
  } finally {
    clearTimeout(boundTimer);
    options.signal?.removeEventListener('abort', onCancel);
    // At the bound (or once cancelled) only a short grace is left to stop the server.
    const closeBy = stop.signal.aborted ? Date.now() : started + options.overallTimeoutMs;
    await Promise.allSettled(run.peers.map((peer) => peer.close({ deadline: closeBy })));
  }
  if (cancelled) throw new CancelledError('the probe run was cancelled');
  report.leaves = ledger.finish();
  report.summary = summarise(report.leaves);
  report.durationMs = Date.now() - started;
  return report;
}

/** Runs every check whose leaves the run wants and whose transport applies, in order. */
async function runChecks(run: ProbeRun): Promise<void> {
  for (const check of CHECKS) {
    if (check.transport !== undefined && check.transport !== run.target.kind) continue;
    if (![...Object.keys(check.leaves), ...(check.feeds ?? [])].some((leaf) => run.wants(leaf))) continue;
    await check.run(run);
  }
  if (!run.timeLeft()) {
    for (const leaf of STOPPED_EARLY)
      run.note(leaf, `the overall bound (${run.settings.overallTimeoutMs} ms) stopped the run early`, 'untested');
  }
}

/** The overall bound ended the run: what was not probed yet is untested, and says so. */
function stoppedByBound(
  run: ProbeRun,
  report: ProbeReport,
  ledger: Ledger,
  boundMs: number,
  notApplicable: ReadonlySet<string>,
): void {
  if (report.server) {
    ledger.untestedFromNow(`the overall bound (${boundMs} ms) ended the run before this was probed`, notApplicable);
    for (const leaf of STOPPED_EARLY)
      ledger.note(leaf, `the overall bound (${boundMs} ms) stopped the run early`, 'untested');
    return;
  }
  // Not even initialized within the bound: nothing was tested, as with any failed initialize.
  ledger.untested(
    `the server could not be initialized within the overall bound (${boundMs} ms), so nothing was probed`,
  );
  const stderr = run.peers[0]?.stderrTail();
  report.error =
    `could not initialize the server: no answer within the overall ` +
    `bound (${boundMs} ms)${stderr ? `; stderr: ${stderr.slice(-500)}` : ''}`;
}

/**
 * Opens the session: tools/list before initialize (the PRE-INIT check judges it later), then
 * initialize asking for a version no server supports (the VERSION check judges the answer), then
 * with the probe's own version if that was refused. False when the server could not be
 * initialized: report.error says why, and every leaf is untested.
 */
async function startSession(run: ProbeRun, report: ProbeReport): Promise<boolean> {
  let peer = run.open();
  run.progress('PROTO: request before initialize');
  const earlyId = 'before-initialize';
  const early = {
    peer,
    from: peer.transcript.length,
    id: earlyId,
    reply: await peer.request('tools/list', {}, Math.min(run.bound(), EARLY_WAIT_MS), { id: earlyId }),
    killed: false,
  };
  early.killed = !peer.alive();
  if (early.killed) peer = run.open();

  run.progress('PROTO: version negotiation');
  const from = peer.transcript.length;
  let init = await handshake(peer, run.bound(), '1999-01-01');
  run.start = { early, negotiation: { reply: init, exchange: peer.excerpt(from, init.id) } };
  if (!init.message?.result) {
    // An error for an unknown version is not what the spec asks (offer another version); start
    // over with a version the server surely knows.
    if (!peer.alive() || init.timedOut) peer = run.open();
    init = await handshake(peer, run.bound(), PROBE_PROTOCOL_VERSION);
  }
  const result = init.message?.result as
    | {
        protocolVersion?: string;
        capabilities?: Record<string, unknown>;
        serverInfo?: { name?: string; version?: string };
      }
    | undefined;
  if (!result) {
    notInitialized(run, report, peer, init);
    return false;
  }
  run.useSession(peer);
  run.capabilities = result.capabilities && typeof result.capabilities === 'object' ? result.capabilities : {};
  report.server = {
    name: result.serverInfo?.name,
    version: result.serverInfo?.version,
    protocolVersion: result.protocolVersion,
    capabilities: run.capabilities,
  };
  return true;
}

function notInitialized(
  run: ProbeRun,
  report: ProbeReport,
  peer: Peer,
  init: Awaited<ReturnType<typeof handshake>>,
): void {
  run.untestedAll('the server could not be initialized, so nothing was probed');
  const startError = peer.startError();
  if (startError) {
    report.startError = startError;
    report.error = `could not start the command: ${startError}`;
    return;
  }
  // An HTTP request that failed on the connection (refused, reset, refused by the policy) says so in the transcript.
  const connectionError = [...peer.transcript]
    .reverse()
    .find((line) => line.dir === '!' && line.text.startsWith('HTTP request failed: '))
    ?.text.slice(21);
  const url = run.target.kind === 'http' ? run.target.url : '';
  const why =
    init.status === 401 || init.status === 403
      ? `it answered HTTP ${init.status} (a token is needed: pass token)`
      : init.unreadable
        ? `its answer could not be read (${init.unreadable})`
        : init.timedOut
          ? 'no answer'
          : init.closed && run.target.kind === 'http' && connectionError !== undefined
            ? `no connection to ${url} (${connectionError})`
            : init.closed
              ? `it exited or closed the connection${init.status ? ` (HTTP ${init.status})` : ''}`
              : JSON.stringify(init.message?.error ?? init.message).slice(0, 500);
  report.error = `could not initialize the server: ${why}${peer.stderrTail() ? `; stderr: ${peer.stderrTail().slice(-500)}` : ''}`;
}

/** Lists the tools, decides which the probe may call, and notes what that leaves untested. */
async function learnSurface(run: ProbeRun, report: ProbeReport): Promise<void> {
  run.progress('listing tools');
  const tools = await run.listTools(await run.session());
  const callable = tools.filter((tool) => run.settings.allowWrites || tool.annotations?.readOnlyHint === true);
  run.tools = tools;
  run.callable = callable;
  report.tools = {
    listed: tools.length,
    called: callable.map((tool) => tool.name),
    skipped: tools.filter((tool) => !callable.includes(tool)).map((tool) => tool.name),
  };
  if (callable.length === 0 && tools.length > 0) {
    // The server has tools but the probe may call none of them: what only calls exercise applies, untested.
    const why =
      `none of the ${tools.length} tools is annotated readOnlyHint, so ` + `none was called (allow_writes calls them)`;
    // Only what calls would have exercised on these tools: output checks need an outputSchema;
    // path traversal and progress apply only to what a call shows, and stay n/a as with calls.
    const withOutputSchema = tools.some((tool) => tool.outputSchema !== undefined);
    const calling = new Set(CHECKS.filter((check) => check.callsTools).map((check) => check.id));
    for (const leaf of run.leavesOnlyProbedBy(calling)) {
      if (leaf.startsWith('FAULT-SCHEMA-') && !withOutputSchema) continue;
      if (leaf === 'FAULT-SECURITY-PATH-TRAVERSAL' || leaf === 'FAULT-TIMEOUT-PROGRESS') continue;
      run.note(leaf, why, 'untested');
    }
  }
  // Tools whose outputSchema the probe may not check (not callable): their output leaves apply
  // but stay unexercised unless a callable tool's output is checked (a check makes them pass).
  const unchecked = report.tools.skipped.filter((name) =>
    tools.some((tool) => tool.name === name && tool.outputSchema !== undefined),
  );
  if (unchecked.length > 0 && callable.length > 0) {
    const one = unchecked.length === 1;
    const why =
      `${one ? `${unchecked[0]} declares` : `${unchecked.length} tools declare`} ` +
      `an outputSchema but ${one ? 'is' : 'are'} not annotated ` +
      `readOnlyHint, so ${one ? 'its' : 'their'} output was not checked ` +
      `(allow_writes calls ${one ? 'it' : 'them'})`;
    for (const leaf of ['FAULT-SCHEMA-MISSING-STRUCTURED', 'FAULT-SCHEMA-OUTPUT-MISMATCH'])
      run.note(leaf, why, 'untested');
  }
}

export type { Target };
