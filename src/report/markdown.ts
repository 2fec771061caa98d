/**
 * The markdown report of a scenario run. Its first part is fault's report — same sections, same
 * headers, same row formats as fault's markdown report — with fault's bugs fixed: "Mean
 * Latency (ms)" is the mean, errors include timeouts and HTTP 5xx, and the status follows the
 * SLOs. After it come our additions: errors by class, latency from the actual send and time to
 * first byte, a per-second timeline with a chart, the counters of every fault on the proxy
 * (network and HTTP faults, each in its own table), and the impact against the baseline when one
 * ran. Every number here is in the JSON result too.
 */
import type { LoadFigures, PhaseResult, ScenarioResult } from '../scenario/result.js';
import type { SloResult } from '../scenario/slo.js';
import type { FaultCounters, HttpFaultCounters, MappingCounters } from '../proxy/index.js';
import { formatDuration } from '../duration.js';
import { MAX_CONNECTING, worstLate } from '../load/index.js';
import { plural } from '../kernel/plural.js';
import { requestsMet } from '../proxy/run-record.js';
import { timelineCell } from './fault-text.js';
import { latencyChart } from './chart.js';

export function renderReport(result: ScenarioResult): string {
  const out: string[] = [];
  const line = (text = ''): void => void out.push(text);
  line('# Scenarios Report');
  line();
  // The verdict first, with what to do about it: a run the fault never touched must not read as a pass.
  const [firstReason, ...moreReasons] = result.verdictReasons;
  line(
    `**Verdict: ${VERDICT_WORD[result.verdict]}**${firstReason ? ` — ${firstReason}` : ' — every SLO held with the fault acting on the traffic.'}`,
  );
  for (const reason of moreReasons) line(`- ${reason}`);
  // Kept apart from the reasons, so a caveat never reads as why the verdict is what it is.
  for (const caveat of result.verdictCaveats ?? []) line(`- Caveat (not the verdict's reason): ${caveat}`);
  line();
  line(`Start: ${utc(result.startedAt)}`);
  line();
  line(`End: ${utc(result.endedAt)}`);
  line();
  line(`## Scenario: ${result.title}  (items: 1)`);
  line();
  line(
    `_Description:_ ${result.fault.type.replace('_', ' ')} fault ` +
      `${result.routedThroughProxy ? 'between the load and the endpoint' : `on the app's outbound calls through ${result.proxies.join(', ')}`}.`,
  );
  line();
  line(`### 🎯 \`${result.method}\` ${result.url} | ${VERDICT_WORD[result.verdict]}`);
  line();
  line('**Call**:');
  line();
  line(`- Method: \`${result.method}\``);
  line(`- Timeout: ${Math.round(result.timeoutMs)}ms`);
  const headers = Object.entries(result.headers);
  if (headers.length === 0) line('- Headers: -');
  else {
    line('- Headers:');
    for (const [name, value] of headers) line(`    - ${name}: ${value}`);
  }
  line(`- Body?: ${result.hasBody ? 'Yes' : 'No'}`);
  line(`- Targets allowed: ${result.targets}`);
  line();
  line('**Strategy**:');
  line();
  const s = result.strategy;
  line(
    s.type === 'capacity'
      ? `capacity for ${formatDuration(s.durationMs)} with ${s.clients} ` +
          `clients (closed loop: each client sends as soon as its previous ` +
          `response completes)`
      : `load for ${formatDuration(s.durationMs)} with ${s.clients} clients @ ${formatNumber(s.rps)} RPS`,
  );
  line();
  if (s.type === 'load') {
    line(
      `_${formatNumber(s.ratePerSecond)} requests/s in all, over up to ${s.maxConnections} ` +
        `keep-alive connections opened on demand; success = status ` +
        `${s.expectStatus}._`,
    );
    line();
  }
  line('**Faults Applied**:');
  line();
  line('| Type | Timeline | Description |');
  line('|------|----------|-------------|');
  line(
    `| ${result.fault.type} | ${timelineCell(result.fault.startMs / s.durationMs, result.fault.endMs / s.durationMs)} ` +
      `| ${result.fault.description} |`,
  );
  line();
  renderPhaseCore(result.run, result, line);
  line('---');
  line();

  line('## Details');
  line();
  if (result.ignoredArguments.length > 0) {
    line(`Ignored arguments (they belong to other fault types): ${result.ignoredArguments.join(', ')}.`);
    line();
  }
  line(
    `Fault seed: \`${result.fault.seed}\` (pass it as \`seed\` to ` +
      `replay the same fault decisions). ${faultWindowText(result)}`,
  );
  line();
  const unreachable = Object.entries(result.run.targetConnectFailures);
  if (unreachable.length > 0) {
    line(
      `The proxy could not reach the target ${unreachable.reduce((n, [, count]) => n + count, 0)} ` +
        `times ` +
        `(${unreachable.map(([reason, count]) => `${reason} × ${count}`).join(', ')}); ` +
        (result.routedThroughProxy
          ? 'the load sees each as a reset, since the proxy had accepted the connection.'
          : "the app's call through the mapped port sees each as a reset, " +
            'since the proxy had accepted the connection.'),
    );
    line();
  }
  if (result.run.load) renderLoadDetails(result.run.load, line);
  renderCounters(result.run, line);
  if (result.baseline) renderBaseline(result, line);
  return out.join('\n');
}

type Line = (text?: string) => void;

/** When the fault was really on: the window asked for, as the run's end and its switches bounded it. */
function faultWindowText(result: ScenarioResult): string {
  const { fault, strategy } = result;
  const from = formatDuration(fault.startMs);
  const toTheEnd = fault.endMs >= strategy.durationMs;
  const until = formatDuration(Math.round(fault.activeUntilMs));
  if (!fault.switchedOn) {
    return (
      `Fault window from ${from} to ` +
      `${toTheEnd ? 'the end of the run' : formatDuration(fault.endMs)}: ` +
      `never switched on, since every request had settled before it ` +
      `opened.`
    );
  }
  if (!toTheEnd) {
    return (
      `Fault active from ${from} to ` +
      `${formatDuration(fault.endMs)}${fault.activeUntilMs < fault.endMs ? ` (the load had ended at ${until})` : ''}; ` +
      `requests in flight at its end finished without it.`
    );
  }
  // The load ends when its last request settles: before `duration` when that one was due near
  // the end and answered quickly, after it while requests in flight drain.
  if (fault.activeUntilMs <= strategy.durationMs) {
    return `Fault active from ${from} to the end of the run: on until the last request settled, at ${until}.`;
  }
  return (
    `Fault active from ${from} to the end of the run: the load ran ${formatDuration(strategy.durationMs)}, ` +
    `and the fault stayed on while the requests still in flight settled, until ${until} ` +
    `(each request ends by its timeout, ${formatDuration(result.timeoutMs)} after its intended start).`
  );
}

/**
 * Responses whose status was outside expect_status (http_5xx and http_status). fault prints a
 * hard-coded 0 in load mode; here the column says what its name does, so a run of 404s does not
 * show "0" expectation failures.
 */
function expectationFailures(load: LoadFigures): number {
  return load.errorsByClass.http_status + load.errorsByClass.http_5xx;
}

const VERDICT_WORD: Record<ScenarioResult['verdict'], string> = {
  passed: 'Passed',
  failed: 'Failed',
  inconclusive: 'Inconclusive',
};

/** fault's Run Overview, percentile and SLO tables, for the fault phase. */
function renderPhaseCore(phase: PhaseResult, result: ScenarioResult, line: Line): void {
  line('**Run Overview**:');
  line();
  if (phase.capacity) {
    const c = phase.capacity;
    line(
      '| Sustained Requests/s | Num. Requests | Num. Errors | Timeouts ' +
        '| Mean Latency (ms) | p50 (ms) | p99 (ms) | Total Time |',
    );
    line(
      '|----------------------|---------------|-------------|----------|-------------------|----------|----------|------------|',
    );
    line(
      `| ${c.requestsPerSecond.toFixed(1)} | ${c.sent} | ${withPercent(c.errors, c.sent)} ` +
        `| ${c.timeouts} | ${c.latencyWholeMs.mean.toFixed(2)} | ${c.latencyWholeMs.p50} ` +
        `| ${c.latencyWholeMs.p99} | ${humanize(c.elapsedMs)} |`,
    );
    line();
    line("_Capacity latencies are autocannon's: whole milliseconds, completed responses only, from the send._");
    line();
    if (phase.slos.length > 0) renderSlos(phase.slos, line);
    if (phase.slosNotEvaluated.length > 0) {
      line(
        `Not evaluated in a closed-loop run (no latency from an intended start): ${phase.slosNotEvaluated.join(', ')}.`,
      );
      line();
    }
    return;
  }
  const load = phase.load!;
  line(
    '| Num. Requests | Num. Errors | Min. Response Time | Max ' +
      'Response Time | Mean Latency (ms) | Expectation Failures | Total ' +
      'Time |',
  );
  line(
    '|---------------|-------------|--------------------|-------------------|-------------------|----------------------|------------|',
  );
  line(
    `| ${load.requests} | ${withPercent(load.errors, load.requests)} ` +
      `| ${fixed2(load.latency?.min)} | ${fixed2(load.latency?.max)} | ${fixed2(load.latency?.mean)} ` +
      `| ${expectationFailures(load)} | ${humanize(load.elapsedMs)} |`,
  );
  line();
  if (load.saturation) {
    const sat = load.saturation;
    const rate = result.strategy.ratePerSecond;
    // The total rate is num_clients × rps, so raising num_clients would raise the rate too: the
    // connection cap is max_connections, and the rate is lowered through rps.
    line(
      `> ⚠️ The connections were the bottleneck: ` +
        `${sat.waitedPercent.toFixed(1)}% of the requests waited for one ` +
        `of the ` +
        `max_connections = ${load.maxConnections} connections (median ` +
        `wait ${fixed2(sat.waitP50Ms)} ms), and the latencies below ` +
        `include that wait. ` +
        `At ${formatNumber(rate)} requests/s and a mean service time of ${fixed2(load.serviceTime?.mean)} ` +
        `ms, about ${plural(sat.connectionsNeeded, 'request')} ` +
        `${sat.connectionsNeeded === 1 ? 'is' : 'are'} in flight at ` +
        `once; ` +
        `to measure the fault alone, set max_connections to at least ` +
        `${Math.max(Math.ceil(sat.connectionsNeeded * 1.5), load.maxConnections + 1)}, ` +
        `or lower rps so that num_clients × rps × service time stays under ${load.maxConnections} connections.`,
    );
    line();
  }
  line('| Latency Percentile | Latency (ms) | Num. Requests (% of total) |');
  line('|--------------------|--------------|----------------------------|');
  for (const row of load.percentiles)
    line(`| p${row.percentile} | ${fixed2(row.latencyMs)} | ${row.requests} (${row.percentOfTotal.toFixed(1)}%) |`);
  line();
  if (phase.slos.length > 0) renderSlos(phase.slos, line, phase.slosWindow);
}

function renderSlos(slos: SloResult[], line: Line, window?: PhaseResult['slosWindow']): void {
  if (window) {
    // The table above is the whole run's; the verdict is the window's, as an experiment judges its window.
    line(
      `SLOs judged over the ${plural(window.requests, 'request')} due while the fault was active ` +
        `(${formatDuration(window.fromMs)}–${formatDuration(window.toMs)}), not over the whole run:`,
    );
    line();
  }
  line('| SLO       | Pass? | Objective | Margin | Num. Requests Over Threshold (% of total) |');
  line('|-----------|-------|-----------|--------|------------------------------------------|');
  for (const slo of slos) {
    const unit = slo.type === 'latency' ? 'ms' : '%';
    // fault's "99% < 350ms" for latency; for errors its "99% < 1%" reads as nonsense, so say it plainly.
    const objective =
      slo.type === 'latency'
        ? `${formatNumber(slo.objective)}% < ${formatNumber(slo.threshold)}ms`
        : `errors < ${formatNumber(slo.threshold)}%`;
    const margin = `${slo.margin >= 0 ? 'Below' : 'Above'} by ${Math.abs(slo.margin).toFixed(1)}${unit}`;
    line(
      `| ${slo.title} | ${slo.pass ? '✅' : '❌'} | ${objective} | ${margin} ` +
        `| ${slo.over} (${slo.overPercent.toFixed(1)}%) |`,
    );
  }
  line();
}

function renderLoadDetails(load: LoadFigures, line: Line): void {
  line('### Errors by class');
  line();
  line('| Class | Count | % of requests |');
  line('|-------|-------|---------------|');
  for (const [errorClass, count] of Object.entries(load.errorsByClass))
    line(`| ${errorClass} | ${count} | ${percent(count, load.requests)} |`);
  line();
  const details = Object.entries(load.errorDetails);
  if (details.length > 0)
    line(`Error details: ${details.map(([detail, count]) => `${detail} × ${count}`).join(', ')}.`);
  const statuses = Object.entries(load.statusCodes);
  line(
    `Responses by status: ` +
      `${statuses.length > 0 ? statuses.map(([status, count]) => `${status} × ${count}`).join(', ') : 'none'}.`,
  );
  line();
  line('### Latency breakdown');
  line();
  line(
    "Latency counts from each request's intended start (so waiting " +
      'for a connection or a stalled server counts, without coordinated ' +
      'omission); service time from the actual send; time to first byte ' +
      'from writing the request to the first byte of the final response ' +
      '(an interim 100 Continue or 103 Early Hints does not count).',
  );
  line();
  line('| Measure (ms) | Count | Mean | p50 | p95 | p99 | p99.9 | Max |');
  line('|--------------|-------|------|-----|-----|-----|-------|-----|');
  for (const [name, stats] of [
    ['latency', load.latency],
    ['service time', load.serviceTime],
    ['time to first byte', load.ttfb],
    ['send lag', load.sendLag],
  ] as const) {
    if (!stats) line(`| ${name} | 0 | - | - | - | - | - | - |`);
    else
      line(
        `| ${name} | ${stats.count} | ${fixed2(stats.mean)} | ${fixed2(stats.p50)} ` +
          `| ${fixed2(stats.p95)} | ${fixed2(stats.p99)} | ${fixed2(stats.p999)} ` +
          `| ${fixed2(stats.max)} |`,
      );
  }
  line();
  line(
    `Target rate ${formatNumber(load.targetRatePerSecond)} req/s, ` +
      `achieved ${load.achievedRatePerSecond.toFixed(1)} req/s. ` +
      `Connections: ${load.connectionsOpened} opened (up to max_connections = ${load.maxConnections}), ` +
      (load.connectionsReopened > 0
        ? `reopened ${load.connectionsReopened} times (after the target or ` +
          `a fault closed one, or a request timed out on it), `
        : '') +
      `at most ${load.peakBusyConnections} busy at once; ` +
      `${plural(load.queued, 'request')} waited for a free connection${queuedWhy(load)}, ` +
      `${load.notSent} timed out before they could be sent.` +
      ownLateness(load) +
      ((load.warmRequests ?? 0) > 0
        ? ` Before the first measured request, ${load.warmRequests} ` +
          `unmeasured requests on the first connections warmed the path ` +
          `this run brought up (the proxy's connections, the target's side ` +
          `of them); they are in none of the load's figures, but the proxy's ` +
          `connection and byte counters include them.`
        : '') +
      (load.processWarmUp
        ? ` Before this phase (or an earlier run in the same process), faultline warmed its own load generator and ` +
          `proxy: ${formatNumber(load.processWarmUp.ratePerSecond)} req/s for ` +
          `${formatDuration(load.processWarmUp.durationMs)} (${plural(load.processWarmUp.requests, 'request')}, and ` +
          `${load.processWarmUp.connectionRequests} more as its connections opened) to a sink of its own on loopback, ` +
          `never the target.`
        : ''),
  );
  line();
  if (load.duringFault) {
    const w = load.duringFault;
    line(
      `While the fault was active ` +
        `(${formatDuration(w.fromMs)}–${formatDuration(w.toMs)}): ` +
        `${plural(w.requests, 'request')}, ${withPercent(w.errors, w.requests)} errors, ` +
        `p50 ${fixed2(w.latency?.p50)} ` +
        `ms, p95 ${fixed2(w.latency?.p95)} ms, p99 ${fixed2(w.latency?.p99)} ` +
        `ms.`,
    );
    line();
  }
  line('### Timeline');
  line();
  line(
    'Requests are grouped by the second they were due in (their ' +
      'intended start), not the second they ended. "Fault active" says ' +
      'whether the fault window overlaps that second: a request due ' +
      'just before the window opens may still cross the proxy after it ' +
      'opened.',
  );
  line();
  line('| Second | Requests | p50 (ms) | p95 (ms) | Errors | Fault active |');
  line('|--------|----------|----------|----------|--------|--------------|');
  for (const second of load.timeline) {
    line(
      `| ${second.second} | ${second.requests} | ${fixed2(second.p50Ms)} ` +
        `| ${fixed2(second.p95Ms)} | ${second.errors} | ${second.faultActive ? 'yes' : 'no'} ` +
        `|`,
    );
  }
  line();
  const chart = latencyChart(load.timeline);
  if (chart) {
    line(chart);
    line();
  }
}

/** faultline's own lateness in this phase (LoadFigures.generatorLate), when it sent any request late. */
function ownLateness(load: LoadFigures): string {
  const late = load.generatorLate;
  if (!late || late.sentLate === 0) return '';
  return (
    ` faultline itself sent ${plural(late.sentLate, 'request')} (${late.sentLatePercent.toFixed(1)}%) more than ` +
    `${late.thresholdMs} ms after ${late.sentLate === 1 ? 'its' : 'their'} intended start ` +
    `(its own thread was behind, ${worstLate(late)}; ` +
    'in the send lag above).'
  );
}

/**
 * Why requests waited for a connection, briefly: every open one was busy and no new one could open, because of the cap
 * or because the generator sets up at most MAX_CONNECTING new ones at a time (open-loop.ts).
 */
function queuedWhy(load: LoadFigures): string {
  if (load.queued === 0) return '';
  if (load.saturation) return ' (every open one busy, some at the max_connections cap)';
  if (load.connectionsOpened >= load.maxConnections) return ' (every open one busy, none more allowed)';
  return (
    ` (every open one busy while more were being set up, at most ${MAX_CONNECTING} at a time; ` +
    'not the max_connections cap)'
  );
}

function renderCounters(phase: PhaseResult, line: Line): void {
  line('### Fault proxy counters');
  line();
  line('| Mapping | Port | Connections | Connect failures | Bytes client→target | Bytes target→client |');
  line('|---------|------|-------------|------------------|---------------------|---------------------|');
  for (const m of phase.proxy.mappings as MappingCounters[]) {
    // An HTTP mapping opens its target leg on the first forwarded request: say both counts.
    const connections =
      m.httpConnections === undefined
        ? String(m.connections)
        : `${m.httpConnections} from clients, ${m.connections} to the target`;
    line(
      `| \`${m.mapping}\` | ${m.port} | ${connections} | ${m.connectFailures} ` +
        `| ${m.bytesUpstream} | ${m.bytesDownstream} |`,
    );
  }
  line();
  const faults = phase.proxy.faults as FaultCounters[];
  if (faults.length > 0) {
    // Per-chunk delays overlap (each counts from its chunk's arrival), so their sum is not the
    // time added to a request: the column says what it is.
    // On a protocol-aware mapping a fault also counts the requests that met it, in their unit (a
    // Redis blackhole holds commands, not "1 connection"): a column when any did.
    const met = faults.some((f) => f.httpExchanges || f.respCommands);
    line(
      '| Fault | Connections | Applications | Delays drawn, summed (ms) ' +
        `| Segments lost / seen | Stall (ms) | Held (ms) | Bytes paced |${met ? ' Requests met |' : ''}`,
    );
    line(
      '|-------|-------------|--------------|------------------|----------------------|------------|-----------|-------------|' +
        (met ? '--------------|' : ''),
    );
    for (const f of faults) {
      line(
        `| ${f.name} | ${f.connections} | ${f.applications} | ${f.delayAddedMs.toFixed(1)} ` +
          `| ${f.segmentsLost} / ${f.segments} | ${f.stallMs.toFixed(1)} | ${f.timeHeldMs.toFixed(1)} ` +
          `| ${f.bytesPaced} |${met ? ` ${requestsMet(f) ?? '0'} |` : ''}`,
      );
    }
    line();
  }
  const httpFaults = phase.proxy.httpFaults ?? [];
  if (httpFaults.length > 0) {
    // Requests that met the fault, and what became of them: requests = changed (applications) + drawn but left as
    // they were (a delay of 0 ms, a cut past the body's end) + passes (not drawn) + oversized (too large to rewrite).
    line(
      '| HTTP fault | Type | Mapping | Requests met | Changed (applications) | Drawn, changed nothing ' +
        '| Passes (not drawn) | Oversized (passed unchanged) |',
    );
    line(
      '|------------|------|---------|--------------|------------------------|------------------------' +
        '|--------------------|------------------------------|',
    );
    for (const f of httpFaults as HttpFaultCounters[]) {
      line(
        `| ${f.name} | ${f.type} | ${f.target === null ? 'every mapping' : `\`${f.target}\``} ` +
          `| ${f.requests} | ${f.applications} | ${f.unchanged ?? 0} | ${f.passes} | ${f.oversized} ` +
          `|`,
      );
    }
    line();
  }
  if (faults.length === 0 && httpFaults.length === 0) {
    line('No fault was set on this proxy.');
    line();
  }
}

function renderBaseline(result: ScenarioResult, line: Line): void {
  const baseline = result.baseline!;
  line('### Impact against the baseline');
  line();
  const through = baseline.proxy.mappings.map(
    (m) =>
      `\`${m.mapping}\` ${m.httpConnections ?? m.connections} ` +
      `connections, ${m.bytesUpstream} B client→target, ${m.bytesDownstream} ` +
      `B target→client`,
  );
  line(
    `The baseline ran first, through the same path with no fault, for ` +
      `${formatDuration(result.strategy.durationMs)} (its proxy: ` +
      `${through.join('; ') || 'no mapping'}).`,
  );
  line();
  if (result.impactWarning) {
    line(`**${result.impactWarning}**`);
    line();
  }
  line('| Metric | Baseline | With fault | Change | Ratio |');
  line('|--------|----------|------------|--------|-------|');
  for (const row of result.impact) {
    const unit = row.unit === 'ms' ? ' ms' : row.unit === '%' ? '%' : ' req/s';
    const value = (v: number | null) => (v === null ? '-' : `${v.toFixed(2)}${unit}`);
    const change = row.change === null ? '-' : `${row.change >= 0 ? '+' : ''}${row.change.toFixed(2)}${unit}`;
    line(
      `| ${row.metric} | ${value(row.baseline)} | ${value(row.fault)} | ` +
        `${change} | ${row.ratio === null ? '-' : `×${row.ratio.toFixed(2)}`} ` +
        `|`,
    );
  }
  line();
  if (baseline.slos.length > 0) {
    line(`Baseline SLOs: ${baseline.slos.map((slo) => `${slo.title} ${slo.pass ? '✅' : '❌'}`).join(', ')}.`);
    line();
  }
}

/** "2026-11-22 10:00:00.123 UTC" */
function utc(iso: string): string {
  return iso.replace('T', ' ').replace('Z', ' UTC');
}

/** chrono-humanize's precise style, as fault prints Total Time: "10 seconds and 179 ms". */
export function humanize(ms: number): string {
  const total = Math.round(ms);
  const parts: string[] = [];
  const minutes = Math.floor(total / 60_000);
  const seconds = Math.floor((total % 60_000) / 1000);
  const millis = total % 1000;
  if (minutes > 0) parts.push(`${minutes} minute${minutes === 1 ? '' : 's'}`);
  if (seconds > 0) parts.push(`${seconds} second${seconds === 1 ? '' : 's'}`);
  if (millis > 0 || parts.length === 0) parts.push(`${millis} ms`);
  return parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

function withPercent(count: number, total: number): string {
  return `${count} (${total === 0 ? '0.0' : ((count / total) * 100).toFixed(1)}%)`;
}

function percent(count: number, total: number): string {
  return `${total === 0 ? '0.0' : ((count / total) * 100).toFixed(1)}%`;
}

function fixed2(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : value.toFixed(2);
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(+value.toFixed(3));
}
