/**
 * The verdict of a scenario (docs/design.md, "5. Load, scenarios and verdicts"): failed when an SLO failed;
 * inconclusive when the fault
 * could not have touched what was measured — no connection reached a mapped proxy port, or the
 * fault never acted while it was active — or when the only failed SLOs are latency SLOs that hold
 * without the requests the load generator sent late (late-sent.ts); passed otherwise. A url where
 * nothing listens never gets here: the runner's preflight refuses it before the load. Each verdict
 * comes with the reasons the
 * report puts in its first lines, saying what to do about it.
 */
import { formatDuration } from '../duration.js';
import { plural } from '../kernel/plural.js';
import { isExpectedStatus } from '../load/expect-status.js';
import type { FaultDeclaration } from '../proxy/faults/declaration.js';
import { networkFault } from '../proxy/faults/declarations.js';
import { HTTP_FAULTS, httpFault, httpFaultInert } from '../proxy/http/declarations.js';
import { validateHttpFault } from '../proxy/http/index.js';
import { httpFaultActed, networkFaultActed } from '../proxy/run-record.js';
import type { ScenarioSpec } from './input.js';
import type { PhaseResult } from './result.js';

import type { Verdict, VerdictWithReasons } from '../kernel/verdict.js';

export type { Verdict, VerdictWithReasons };

/**
 * @param switchedOn whether the fault was ever switched on: false when every request had settled
 *   before fault_start (run.ts, faultWindow).
 */
export function decideVerdict(spec: ScenarioSpec, run: PhaseResult, switchedOn = true): VerdictWithReasons {
  const over = run.slosWindow
    ? ` over the ${plural(run.slosWindow.requests, 'request')} due in the fault window ` +
      `(${formatDuration(run.slosWindow.fromMs)} to ${windowEnd(spec)})`
    : '';
  const lateness = latenessExplains(run);
  const failed = run.slos
    .filter((slo) => !slo.pass && !lateness.explained.has(slo.title))
    .map((slo) => `SLO "${slo.title}" failed${over}.`);
  const statusHints = unexpectedStatusHints(run, injectedAnswers(spec, run));
  const untouched = untouchedReasons(spec, run, switchedOn);
  const unreachable = unreachableHint(spec, run);
  const certificate = certificateHint(spec, run);
  const redirects = redirectHints(spec, run);
  const closedLoop = closedLoopReasons(spec, run);
  // A closed loop that completed nothing tested nothing: its error SLO "failed" over 0 requests.
  if (closedLoop.nothingMeasured)
    return { verdict: 'inconclusive', reasons: [closedLoop.nothingMeasured, ...unreachable] };
  // Failed whatever the fault did, but say when it never touched the traffic: the failure is then
  // the endpoint's own (it failed with no fault at all), not the fault's impact.
  if (failed.length > 0) {
    return {
      verdict: 'failed',
      reasons: [
        ...failed,
        ...unreachable,
        ...certificate,
        ...statusHints,
        ...redirects,
        ...closedLoop.warnings,
        ...lateness.reasons,
        ...untouched.inconclusive,
        ...untouched.warnings,
      ],
    };
  }
  // Failed only through requests this machine sent late: what failed may be the generator, not the target.
  if (lateness.reasons.length > 0)
    return {
      verdict: 'inconclusive',
      reasons: [...lateness.reasons, ...untouched.inconclusive, ...statusHints, ...redirects, ...untouched.warnings],
    };
  if (untouched.inconclusive.length > 0)
    return {
      verdict: 'inconclusive',
      reasons: [...untouched.inconclusive, ...statusHints, ...redirects, ...closedLoop.warnings],
    };
  return { verdict: 'passed', reasons: [...statusHints, ...redirects, ...closedLoop.warnings, ...untouched.warnings] };
}

/**
 * The failed latency SLOs that hold without the requests the generator sent late (late-sent.ts): by title, and a
 * reason for each saying so.
 */
function latenessExplains(run: PhaseResult): { explained: Set<string>; reasons: string[] } {
  const onTime = run.slosSentOnTime;
  const held = onTime?.slos.filter((slo) => slo.pass) ?? [];
  if (!onTime || held.length === 0) return { explained: new Set(), reasons: [] };
  const late = run.load?.generatorLate;
  return {
    explained: new Set(held.map((slo) => slo.title)),
    reasons: held.map(
      (slo) =>
        `SLO "${slo.title}" failed, but the load generator (this machine) ran behind` +
        (late ? ` (${plural(late.sentLate, 'request')} sent late by its own thread)` : '') +
        `: without the ${plural(onTime.leftOut, 'request')} sent more than ${onTime.lateMs} ms ` +
        `after ${onTime.leftOut === 1 ? 'its' : 'their'} intended ` +
        `start, p${slo.objective} is ${slo.observed.toFixed(1)} ms and the SLO holds, so the failure may be this ` +
        "machine's lateness, not the target's: run again on a less busy machine or at a lower rate.",
    ),
  };
}

/**
 * The status the scenario's own HTTP fault answers with (its declaration's `answers`) and
 * how many times it did, so those answers are not blamed on the endpoint.
 */
function injectedAnswers(spec: ScenarioSpec, run: PhaseResult): { status: number; count: number } | undefined {
  const fault = spec.httpFault;
  if (!fault) return undefined;
  const declaration = HTTP_FAULTS.find((each) => each.type === fault.type) as FaultDeclaration<unknown, unknown>;
  // Validated: the defaults filled in (a status_code given as "" is the default 500).
  const status = declaration?.answers?.(validateHttpFault(fault));
  if (status === undefined) return undefined;
  return { status, count: sum(httpCounters(spec, run), 'applications') };
}

/** The counters of the scenario's fault: one per mapping it was set on (compile.ts: a step per mapping). */
function httpCounters(spec: ScenarioSpec, run: PhaseResult) {
  return (run.proxy.httpFaults ?? []).filter((counters) => counters.type === spec.httpFault?.type);
}

function networkCounters(spec: ScenarioSpec, run: PhaseResult) {
  return run.proxy.faults.filter((counters) => counters.type === spec.fault.type);
}

function sum<T extends string>(counters: ReadonlyArray<Record<T, number>>, field: T): number {
  return counters.reduce((total, counter) => total + counter[field], 0);
}

/** "404 × 40: is the url right?" for each unexpected status, most frequent first. */
function unexpectedStatusHints(run: PhaseResult, injected?: { status: number; count: number }): string[] {
  const load = run.load;
  if (!load || (load.errorsByClass.http_status ?? 0) + (load.errorsByClass.http_5xx ?? 0) === 0) return [];
  const unexpected = Object.entries(load.errorDetails)
    .map(([detail, count]) => ({ status: /^HTTP (\d{3})$/.exec(detail)?.[1], count }))
    .filter((entry): entry is { status: string; count: number } => entry.status !== undefined)
    .sort((a, b) => b.count - a.count);
  return unexpected.map(({ status, count }) => {
    if (injected && injected.count > 0 && Number(status) === injected.status) {
      const fromEndpoint = count - injected.count;
      return fromEndpoint > 0
        ? `${status} × ${count}: ${injected.count} injected by the HTTP ` +
            `fault, ${fromEndpoint} from the endpoint ` +
            `(${hintFor(Number(status))})`
        : `${status} × ${count}: injected by the HTTP fault, as asked.`;
    }
    return `${status} × ${count}: ${hintFor(Number(status))}`;
  });
}

function hintFor(status: number): string {
  if (status === 404 || status === 405 || status === 410) return 'is the url (path and method) right?';
  if (status === 401 || status === 403) return 'does the endpoint need credentials (headers)?';
  if (status === 429) return 'the endpoint rate-limited the load; lower the rate or add 429 to expect_status.';
  if (status >= 500) return 'the endpoint failed; see errors by class.';
  return 'not in expect_status; if this answer is right, add it to expect_status.';
}

/**
 * With the proxy in front of the url, a target that refuses (nothing listening) or cannot be
 * reached reaches the load as resets, since the proxy had accepted each connection: say what
 * really happened, where the agent reads first.
 */
function unreachableHint(spec: ScenarioSpec, run: PhaseResult): string[] {
  const urlRefused = urlRefusedHint(spec, run);
  const failures = Object.entries(run.targetConnectFailures ?? {});
  if (failures.length === 0) return urlRefused;
  const total = failures.reduce((sum, [, count]) => sum + count, 0);
  const why =
    `${total} time${total === 1 ? '' : 's'} ` +
    `(${failures.map(([reason, count]) => `${reason} × ${count}`).join(', ')})`;
  if (spec.proxies.length === 0) {
    return [
      `the proxy could not connect to the target ${new URL(spec.url).host} ` +
        `${why}; the load saw each as a reset: is the service running ` +
        `there?`,
    ];
  }
  // With proxies the app's calls failed, and the app's answers (502s, resets) are what the load
  // saw: name the dependencies the proxy could not reach, or the endpoint gets the blame.
  const remotes = run.proxy.mappings
    .map((counters, index) => ({ counters, mapping: spec.proxies[index]! }))
    .filter(({ counters }) => counters.connectFailures > 0)
    .map(({ counters, mapping }) => `${mapping.text} × ${counters.connectFailures}`);
  return [
    ...urlRefused,
    `the proxy could not connect to the app's dependency ` +
      `${why}${remotes.length > 0 ? `, through ${remotes.join(', ')}` : ''}; ` +
      "the app saw each call as a reset: is the dependency running at the mapping's remote address?",
  ];
}

/**
 * With `proxies` the load connects to the url itself, so a url where nothing listens is refused to the load: said
 * before anything about the mappings, which the app never had a chance to use.
 */
function urlRefusedHint(spec: ScenarioSpec, run: PhaseResult): string[] {
  const refused = spec.proxies.length > 0 ? (run.load?.errorsByClass.refused ?? 0) : 0;
  if (refused === 0) return [];
  return [
    `the load could not connect to the url ${new URL(spec.url).host}: ${refused} of ` +
      `${plural(run.load!.requests, 'request')} refused (nothing listening there): is the service running there?`,
  ];
}

/** What OpenSSL and Node call a certificate the client could not verify. */
const CERTIFICATE_ERROR =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * An https url whose certificate the load refused: the error details name OpenSSL's code, which
 * does not say what to do; a self-signed or private-CA certificate (a local or staging server)
 * is what insecure_tls is for.
 */
function certificateHint(spec: ScenarioSpec, run: PhaseResult): string[] {
  if (!spec.rejectUnauthorized || !run.load) return [];
  const refused = Object.entries(run.load.errorDetails).filter(([detail]) => CERTIFICATE_ERROR.test(detail));
  if (refused.length === 0) return [];
  return [
    `the load refused the target's TLS certificate ` +
      `(${refused.map(([code, count]) => `${code} × ${count}`).join(', ')}): ` +
      'for a self-signed or private-CA certificate, pass insecure_tls: ' +
      'true (--insecure-tls); for a name mismatch, use the host name ' +
      'the certificate names in url.',
  ];
}

/**
 * What a closed-loop (capacity) run's figures are worth. autocannon, which runs it, reads only
 * responses on connections kept alive: a body ended by the server closing the connection
 * (HTTP/1.0 without Content-Length) is never counted, and when the server closes after each
 * response (Connection: close, HTTP/1.0) it writes the next request on the closing socket and
 * times the following response from that lost request (measured: p50 221 ms for ~18 ms exchanges).
 * The proxy in front of url sees how many connections the load opened.
 */
function closedLoopReasons(spec: ScenarioSpec, run: PhaseResult): { nothingMeasured?: string; warnings: string[] } {
  const capacity = run.capacity;
  if (!capacity) return { warnings: [] };
  const seconds = formatDuration(spec.durationMs);
  if (capacity.sent === 0) {
    return {
      nothingMeasured:
        `the closed loop completed no request in ${seconds} (no response, ` +
        `no error): autocannon, which runs strategy capacity, ` +
        'reads only responses that end by their length, so a body ended ' +
        'by closing the connection (HTTP/1.0) is never counted; ' +
        'use strategy load, which reads any response.',
      warnings: [],
    };
  }
  if (capacity.responses === 0) {
    // Every request failed (timed out, reset, refused): no requests/s was sustained, so there is nothing to size, and
    // its error SLO "failed" over requests that never completed. docs/network.md: a capacity run completed nothing.
    const other = capacity.errors - capacity.timeouts;
    return {
      nothingMeasured:
        `the closed loop completed no request in ${seconds} (${capacity.sent} sent: ` +
        `${capacity.timeouts} timed out after ${formatDuration(Math.max(1000, spec.timeoutMs))}` +
        `${other > 0 ? `, ${other} failed otherwise` : ''}), so it measured no requests/s: ` +
        'with a fault that holds every request (blackhole, stall), use strategy load, ' +
        'whose SLOs judge each request from its intended start.',
      warnings: [],
    };
  }
  const opened = spec.proxies.length === 0 ? (run.proxy.mappings[0]?.connections ?? 0) : 0;
  // autocannon reopens after its own timeouts too; only count what the target closed.
  if (opened <= spec.clients || capacity.timeouts > 0) return { warnings: [] };
  return {
    warnings: [
      `the target closed connections (${opened} opened for ${spec.clients} ` +
        `clients: Connection: close or HTTP/1.0): autocannon, which runs ` +
        `strategy capacity, ` +
        'then times some responses from a request it wrote on the closing ' +
        'connection, so its latencies read too high; the requests/s ' +
        'stand. ' +
        'Use strategy load for latencies.',
    ],
  };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Redirects that counted as success (3xx is in the default expect_status): the load never
 * follows one, so what it timed was the redirect, not the page it points to. Said wherever the
 * agent reads first, since a pass on redirects alone has not measured the endpoint it meant.
 */
function redirectHints(spec: ScenarioSpec, run: PhaseResult): string[] {
  const load = run.load;
  if (!load) return [];
  const counted = Object.entries(load.statusCodes)
    .map(([status, count]) => ({ status: Number(status), count }))
    .filter(({ status }) => REDIRECTS.has(status) && isExpectedStatus(spec.expectedStatus, status))
    .sort((a, b) => b.count - a.count);
  return counted.map(
    ({ status, count }) =>
      `${status} × ${count}: a redirect, counted as success ` +
      `(expect_status ${spec.expectStatus}) but not followed: the load ` +
      `timed the redirect itself, ` +
      'not the page it points to; give that page as url, or leave 3xx ' +
      'out of expect_status to count redirects as errors.',
  );
}

/** HTTP faults that change a response's body and nothing else the load measures. */
const BODY_ONLY_HTTP_FAULTS = new Set(['malformed', 'schema_mismatch']);

/** Why the fault may not have touched the measured traffic: hard reasons and softer warnings. */
function untouchedReasons(
  spec: ScenarioSpec,
  run: PhaseResult,
  switchedOn: boolean,
): { inconclusive: string[]; warnings: string[] } {
  const inconclusive: string[] = [];
  const warnings: string[] = [];
  if (spec.proxies.length > 0) {
    const unused = run.proxy.mappings
      .map((counters, index) => ({ counters, mapping: spec.proxies[index]!, port: run.proxyPorts[index] }))
      // On an HTTP mapping `connections` counts the legs to the target; an HTTP fault that answers
      // itself (error, rate_limit, timeout, connection_refused) opens none, yet the app connected.
      .filter(({ counters }) => counters.connections === 0 && (counters.httpConnections ?? 0) === 0)
      .map(
        ({ mapping, port }) =>
          `the app made no connection to ` +
          `${mapping.listenHost.includes(':') ? `[${mapping.listenHost}]` : mapping.listenHost}:${port ?? mapping.listenPort} ` +
          `(${mapping.text}) during the run: point its upstream at that ` +
          `address.`,
      );
    if (unused.length === spec.proxies.length) inconclusive.push(...unused);
    else warnings.push(...unused);
  }
  if (inconclusive.length === 0) {
    const window = spec.faultStartMs > 0 || spec.faultEndMs < spec.durationMs ? ' while it was active' : '';
    const emptyWindow = emptyWindowReason(spec, run, switchedOn);
    const noOp = noOpReason(spec);
    if (emptyWindow !== undefined && !faultActed(spec, run)) {
      // The fault had no traffic to act on because of when it ran, not where it sat.
      inconclusive.push(emptyWindow);
    } else if (noOp !== undefined) {
      // Its settings inject nothing (it met every message, adding nothing): the SLOs measured the endpoint alone.
      inconclusive.push(noOp);
    } else if (spec.httpFault) {
      const never = httpNeverChanged(spec, run, window);
      if (never !== undefined) {
        inconclusive.push(never);
      } else if (spec.proxies.length === 0 && BODY_ONLY_HTTP_FAULTS.has(spec.httpFault.type)) {
        // In front of the url its only effect is on what the load receives, and the load judges a
        // response by its status and timing: the SLOs could not have seen it.
        inconclusive.push(
          `the HTTP ${spec.httpFault.type.replace('_', ' ')} fault changes ` +
            `only response bodies, which the load does not read ` +
            `(it measures statuses and latency): put it on the app's ` +
            `dependency with proxies, where the app reads the bodies.`,
        );
      }
    } else {
      const faults = networkCounters(spec, run);
      if (!faults.some(networkFaultActed)) {
        const idle = networkFault(spec.fault.type)?.idle;
        inconclusive.push(
          `the ${spec.fault.type.replace('_', ' ')} fault never acted on ` +
            `the traffic${window} (${sum(faults, 'applications')} applications ` +
            `in the fault counters): ` +
            `no data crossed it in the direction it acts on (side ` +
            `${spec.fault.side ?? 'server'}, direction ` +
            `${spec.fault.direction ?? 'ingress'})` +
            (idle === undefined ? '' : `, or ${idle}`) +
            '.',
        );
      }
    }
  }
  return { inconclusive, warnings };
}

/**
 * Why the fault's settings inject nothing (a latency of 0 ms, a jitter of amplitude 0, an HTTP delay of 0 ms or a
 * probability of 0): its declaration says, whatever the traffic did.
 */
function noOpReason(spec: ScenarioSpec): string | undefined {
  if (spec.httpFault) return httpFaultInert(validateHttpFault(spec.httpFault));
  return networkFault(spec.fault.type)?.inert?.(spec.fault as never);
}

/**
 * Why the HTTP fault changed no exchange, or undefined when it changed one. It counts per exchange: those that
 * matched, of them those that drew it, and of those the ones it changed (`applications`); one that drew it and went
 * through as it was (a cut past the body's end, a body above 16 MiB) is no change.
 */
function httpNeverChanged(spec: ScenarioSpec, run: PhaseResult, window: string): string | undefined {
  const counters = httpCounters(spec, run);
  if (counters.some(httpFaultActed)) return undefined;
  const type = spec.httpFault!.type;
  const requests = sum(counters, 'requests');
  const unchanged = sum(counters, 'unchanged');
  const oversized = sum(counters, 'oversized');
  const drawn = unchanged + oversized;
  const why: string[] = [];
  if (unchanged > 0) why.push(httpFault(type)?.idle ?? 'each went through as it was');
  if (oversized > 0)
    why.push(`${plural(oversized, 'response body', 'response bodies')} above 16 MiB went through unread`);
  return (
    `the HTTP ${type.replace(/_/g, ' ')} fault changed no exchange${window} ` +
    `(${plural(requests, 'matching request')}, ${drawn} drew it, 0 changed): ` +
    (drawn > 0
      ? `${why.join('; ')}.`
      : requests > 0
        ? 'its probability never drew it; raise probability or the traffic.'
        : 'no HTTP/1.1 request matched its method and path.')
  );
}

/** Whether the scenario's fault (network or HTTP) acted at least once: the faults' own rule. */
function faultActed(spec: ScenarioSpec, run: PhaseResult): boolean {
  return spec.httpFault
    ? httpCounters(spec, run).some(httpFaultActed)
    : networkCounters(spec, run).some(networkFaultActed);
}

/**
 * Why a fault window that starts or ends inside the run held no request: none was due in it, or
 * the load had ended (every request settled) before it opened, so it was never switched on.
 * Undefined when the window is the whole run or some request was due in it.
 */
function emptyWindowReason(spec: ScenarioSpec, run: PhaseResult, switchedOn: boolean): string | undefined {
  if (spec.faultStartMs <= 0 && spec.faultEndMs >= spec.durationMs) return undefined;
  const dueInWindow = run.load?.duringFault?.requests;
  if (switchedOn && dueInWindow !== 0) return undefined;
  const type = spec.httpFault ? `HTTP ${spec.httpFault.type.replace('_', ' ')}` : spec.fault.type.replace('_', ' ');
  const rate = spec.clients * spec.rps;
  const end = windowEnd(spec);
  return (
    `the ${type} fault met no request: none was due in its window (${formatDuration(spec.faultStartMs)} to ${end}; ` +
    `one request every ${formatDuration(1000 / rate)} at ${+rate.toFixed(3)} requests/s)` +
    (switchedOn ? '' : ', and every request had settled before it opened, so it was never switched on') +
    ': start it earlier (fault_start), lengthen it (fault_duration) or raise the rate.'
  );
}

/** Where the fault window ends, as the reasons say it. */
function windowEnd(spec: ScenarioSpec): string {
  return spec.faultEndMs >= spec.durationMs ? 'the end of the run' : formatDuration(spec.faultEndMs);
}
