/**
 * The single-file HTML report: everything inline (styles, SVG charts, a few lines of script for
 * the hover read-out), so it opens from a CI artifact with no network. The verdict and its
 * reasons on top; then the timeline of what was switched and probed, the latency and error-rate
 * charts with the fault windows shaded and the moments that mattered marked; the expectations
 * beside them, each with its figure and when it broke.
 */
import { formatDuration } from '../../duration.js';
import { plural } from '../../kernel/plural.js';
import type { ExperimentResult, ExpectationStatus } from '../result.js';
import { escapeHtml, laneChart, lineChart, type Band, type Lane, type Marker } from './svg.js';

const PALETTE = ['#d1242f', '#bc4c00', '#8250df', '#0969da', '#bf3989', '#1b7c83', '#6e7781', '#9a6700'];
const STATUS_COLOR: Record<ExpectationStatus, string> = {
  passed: '#1a7f37',
  failed: '#cf222e',
  inconclusive: '#9a6700',
  not_checked: '#6e7781',
};
const STATUS_ICON: Record<ExpectationStatus, string> = {
  passed: '✓',
  failed: '✗',
  inconclusive: '?',
  not_checked: '–',
};
const ms = (value: number | null | undefined): string =>
  value === null || value === undefined ? '—' : formatDuration(value);
const fixed = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined ? '—' : value.toFixed(digits);

export function renderHtml(result: ExperimentResult): string {
  const duration = result.durationMs;
  const bands: Band[] = result.faults.map((fault, index) => ({
    fromMs: fault.onAtMs ?? fault.plannedFromMs,
    toMs: fault.offAtMs ?? (fault.onAtMs !== null ? duration : fault.plannedToMs),
    label: `${fault.name} (${fault.type} on ${fault.where})`,
    color: PALETTE[index % PALETTE.length]!,
    planned: fault.onAtMs === null,
  }));
  const charts = chartsOf(result, bands);
  const verdictColor =
    result.verdict === 'passed'
      ? STATUS_COLOR.passed
      : result.verdict === 'failed'
        ? STATUS_COLOR.failed
        : STATUS_COLOR.inconclusive;
  const load = result.load;
  const stats = load
    ? [
        ['requests', String(load.requests)],
        ['errors', `${fixed(load.requests ? (load.errors / load.requests) * 100 : 0)}%`],
        ['p50', `${fixed(load.latency?.p50)} ms`],
        ['p99', `${fixed(load.latency?.p99)} ms`],
        ['rate', `${fixed(load.achievedRatePerSecond)} / ${fixed(load.ratePerSecond)} req/s`],
      ]
    : [];
  let failedIndex = 0;
  const expectationItems = result.expectations
    .map((e) => {
      const number = e.status === 'failed' && e.atMs !== null ? `<span class="num">${++failedIndex}</span>` : '';
      return (
        `<li class="exp ${e.status}"><span class="badge" ` +
        `style="background:${STATUS_COLOR[e.status]}">${STATUS_ICON[e.status]} ` +
        `${e.status.replace('_', ' ')}</span>${number}<div ` +
        `class="exp-title">${escapeHtml(e.title)}</div>` +
        `<div ` +
        `class="exp-meta">${e.window ? `${escapeHtml(e.window.label)} ${ms(e.window.fromMs)}–${ms(e.window.toMs)}` : ''}${e.atMs !== null ? ` · at ${ms(e.atMs)}` : ''}</div>` +
        `${e.figure ? `<div class="exp-figure">${escapeHtml(e.figure)}</div>` : ''}${e.reason !== e.figure ? `<div class="exp-reason">${escapeHtml(e.reason)}</div>` : ''}</li>`
      );
    })
    .join('');
  const faultRows = result.faults
    .map(
      (f, index) =>
        `<tr><td><span class="swatch" ` +
        `style="background:${PALETTE[index % PALETTE.length]}"></span>${escapeHtml(f.name)}</td><td>${escapeHtml(f.type)}</td><td>${escapeHtml(f.where)}</td><td>${ms(f.plannedFromMs)}–${ms(f.plannedToMs)}</td><td>${ms(f.onAtMs)}–${ms(f.offAtMs)}</td><td>${f.acted === null ? '?' : f.acted ? 'yes' : 'no'}: ` +
        `${escapeHtml(f.actedDetail)}</td></tr>`,
    )
    .join('');
  const stepBlocks = result.steps
    .map((step) => {
      const body = step.slis
        ? `TCSR ${fixed(step.slis.tcsr, 3)} · availability ${fixed(step.slis.availability, 3)} ` +
          `· correctness ${fixed(step.slis.correctness, 3)} · ETA ${fixed(step.slis.eta, 3)} ` +
          `· blast radius ${fixed(step.slis.blast_radius, 3)} over ${step.slis.calls} ` +
          `calls`
        : step.probe
          ? `verdict ${step.probe.verdict}; ${Object.entries(step.probe.summary)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}${step.probe.failedLeaves.length ? `; failed ${step.probe.failedLeaves.join(', ')}` : ''}`
          : '';
      return (
        `<div class="step"><b>${escapeHtml(step.name)}</b> (${step.kind}, ` +
        `${ms(step.startedAtMs)}–${ms(step.endedAtMs)}) ` +
        `${escapeHtml(body)}${step.error ? ` <i>${escapeHtml(step.error)}</i>` : ''}</div>`
      );
    })
    .join('');
  const commandBlocks = result.commands
    .map(
      (c) =>
        `<details><summary>${escapeHtml(c.id)}: ${c.startError ? `could not start (${escapeHtml(c.startError)})` : c.timedOut ? 'timed out' : `exit ${c.exitCode ?? c.signal}`} ` +
        `· ` +
        `${ms(c.startedAtMs)}–${ms(c.endedAtMs)}</summary><pre>${escapeHtml(c.output.trim().split('\n').slice(-40).join('\n'))}</pre></details>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`${result.verdict.toUpperCase()} · ${result.title}`)}</title>
<style>${STYLE}</style>
</head>
<body>
<header style="border-color:${verdictColor}">
  <div class="verdict" style="background:${verdictColor}">${result.verdict.toUpperCase()}${result.aborted ? ' · ABORTED' : ''}</div>
  <h1>${escapeHtml(result.title)}</h1>
  ${result.description ? `<p class="desc">${escapeHtml(result.description)}</p>` : ''}
  <div class="stats">${stats.map(([label, value]) => `<div><span>${label}</span><b>${escapeHtml(value!)}</b></div>`).join('')}</div>
  <ul class="reasons">${result.verdictReasons.map((reason) => `<li>${escapeHtml(reason)}</li>`).join('')}</ul>
</header>
<main>
  <section class="charts">${charts.join('\n') || '<p>No load ran: nothing to chart.</p>'}
    <div class="readout" id="readout">Hover a chart to read a moment.</div>
  </section>
  <aside><h2>Expectations</h2><ol class="exps">${expectationItems || '<li>None.</li>'}</ol></aside>
</main>
<section class="details">
  ${faultRows ? `<h2>Faults</h2><table><thead><tr><th>Step</th><th>Fault</th><th>Where</th><th>Planned</th><th>On–off</th><th>Acted</th></tr></thead><tbody>${faultRows}</tbody></table>` : ''}
  ${
    load
      ? `<h2>Load</h2><p>${escapeHtml(`${load.method} ${load.url}`)} · ${fixed(load.ratePerSecond)} req/s for ${ms(load.durationMs)} (timeout ${ms(load.timeoutMs)}) · ${plural(load.requests, 'request')}, ${plural(load.errors, 'error')}${
          Object.entries(load.errorsByClass).filter(([, n]) => n > 0).length
            ? ` (${Object.entries(load.errorsByClass)
                .filter(([, n]) => n > 0)
                .map(([k, n]) => `${k} ${n}`)
                .join(', ')})`
            : ''
        } · max ${fixed(load.latency?.max)} ms</p>`
      : ''
  }
  ${stepBlocks ? `<h2>Plane steps</h2>${stepBlocks}` : ''}
  ${commandBlocks ? `<h2>Commands</h2>${commandBlocks}` : ''}
  <p class="foot">faultline experiment · seed ${escapeHtml(String(result.seed ?? '—'))} · ${escapeHtml(result.startedAt)} → ${escapeHtml(result.endedAt)}</p>
</section>
<script type="application/json" id="buckets">${JSON.stringify(result.timeline.buckets).replace(/</g, '\\u003c')}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The timeline strip (faults, plane steps, checks, commands on their lanes) and the latency and error-rate charts. */
function chartsOf(result: ExperimentResult, bands: Band[]): string[] {
  const duration = result.durationMs;
  const failed = result.expectations.filter((e) => e.status === 'failed' && e.atMs !== null);
  const markers: Marker[] = failed.map((e, index) => ({ atMs: e.atMs!, label: `${index + 1}`, color: '#cf222e' }));
  if (result.aborted) markers.push({ atMs: result.aborted.atMs, label: 'abort', color: '#000000' });
  const buckets = result.timeline.buckets;
  const mid = (bucket: { fromMs: number; toMs: number }): number => (bucket.fromMs + bucket.toMs) / 2;
  const charts: string[] = [];
  const lanes: Lane[] = [
    ...result.faults.map((fault, index) => ({
      label: fault.name,
      bars: [
        {
          fromMs: bands[index]!.fromMs,
          toMs: bands[index]!.toMs,
          color: bands[index]!.color,
          planned: fault.onAtMs === null,
          title:
            `${fault.name}: ${fault.type} on ${fault.where}, ` +
            `${ms(fault.onAtMs)}–${ms(fault.offAtMs)}; ${fault.actedDetail}`,
        },
      ],
    })),
    ...result.steps.map((step) => ({
      label: step.name,
      bars:
        step.startedAtMs === null
          ? []
          : [
              {
                fromMs: step.startedAtMs,
                toMs: step.endedAtMs ?? duration,
                color: '#57606a',
                title: `${step.name} (${step.kind})${step.error ? `: ${step.error}` : ''}`,
              },
            ],
    })),
    ...Object.entries(result.checks).map(([id, observations]) => ({
      label: result.expectations.find((e) => e.id.startsWith(id))?.title ?? id,
      bars: [],
      dots: observations.map((o) => ({ atMs: o.atMs, ok: o.ok, title: `${ms(o.atMs)}: ${o.detail}` })),
    })),
    // PromQL polls: a dot per poll; one that could not be judged is not a pass, and says why.
    ...Object.entries(result.promql ?? {}).map(([id, observations]) => ({
      label: result.expectations.find((e) => e.id === id)?.title ?? id,
      bars: [],
      dots: observations.map((o) => ({
        atMs: o.atMs,
        ok: o.state === 'held',
        title: `${ms(o.atMs)}: ${o.state === 'unknown' ? 'not judged: ' : ''}${o.detail}`,
      })),
    })),
    ...result.commands.map((command) => ({
      // The command's name (its expectation's title: `name`, or the command line), not its id.
      label: result.expectations.find((e) => e.id === command.id)?.title ?? command.id,
      bars: [
        {
          fromMs: command.startedAtMs,
          toMs: command.endedAtMs,
          color: command.exitCode === 0 ? '#1a7f37' : '#cf222e',
          title: `${command.id}: exit ${command.exitCode ?? command.signal}`,
        },
      ],
    })),
  ];
  const { baseline, inject, recover } = result.phases;
  const phaseBands: Band[] = [
    { ...baseline, label: 'baseline', color: '#1a7f37' },
    { ...inject, label: 'inject', color: '#cf222e' },
    { ...recover, label: 'recover', color: '#0969da' },
  ].filter((phase) => phase.toMs > phase.fromMs);
  if (lanes.length > 0) charts.push(laneChart('timeline', duration, lanes, phaseBands));
  if (buckets.length > 0) {
    charts.push(
      lineChart({
        id: 'latency',
        title: `Latency from the intended start, ms (per ${formatDuration(result.timeline.bucketMs)})`,
        unit: 'ms',
        durationMs: duration,
        height: 260,
        bands,
        markers,
        series: [
          { name: 'p50', color: '#0969da', points: buckets.map((b) => ({ ms: mid(b), value: b.p50Ms })) },
          { name: 'p95', color: '#8250df', points: buckets.map((b) => ({ ms: mid(b), value: b.p95Ms })) },
          { name: 'p99', color: '#bf3989', points: buckets.map((b) => ({ ms: mid(b), value: b.p99Ms })) },
        ],
      }),
      lineChart({
        id: 'errors',
        title: 'Error rate, % of requests due in each bucket',
        unit: '%',
        durationMs: duration,
        height: 200,
        bands,
        markers,
        maxValue: Math.min(100, Math.max(5, ...buckets.map((b) => b.errorPercent ?? 0)) * 1.1),
        series: [
          {
            name: 'errors',
            color: '#cf222e',
            area: true,
            points: buckets.map((b) => ({ ms: mid(b), value: b.errorPercent })),
          },
        ],
      }),
    );
  }
  return charts;
}

const STYLE = `
:root{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f8fa}
body{margin:0}
header{background:#fff;border-top:6px solid;padding:18px 28px 10px;box-shadow:0 1px 3px #0001}
h1{margin:8px 0 4px;font-size:22px}
h2{font-size:16px;margin:18px 0 8px}
.verdict{display:inline-block;color:#fff;font-weight:700;padding:4px 12px;border-radius:6px;letter-spacing:.05em}
.desc{color:#57606a;margin:4px 0}
.stats{display:flex;gap:26px;margin:12px 0 6px;flex-wrap:wrap}
.stats span{display:block;font-size:12px;color:#57606a;text-transform:uppercase}
.stats b{font-size:18px}
.reasons{margin:6px 0;padding-left:18px;color:#424a53;font-size:14px}
main{display:grid;grid-template-columns:minmax(0,3fr) minmax(280px,1.3fr);gap:18px;padding:18px 28px}
.charts,aside,.details{background:#fff;border-radius:8px;box-shadow:0 1px 3px #0001;padding:12px 16px}
svg.chart{width:100%;height:auto;display:block;margin-bottom:10px}
.grid{stroke:#eaeef2}.axis{stroke:#8c959f}
.tick{font-size:11px;fill:#57606a}.lane-label{font-size:11px;fill:#1f2328}
.chart-title{font-size:13px;font-weight:600;fill:#1f2328}.legend{font-size:12px;font-weight:600}
.marker-label{font-size:11px;font-weight:700}
.readout{font-size:13px;color:#424a53;min-height:1.4em;font-variant-numeric:tabular-nums}
.exps{list-style:none;padding:0;margin:0}
.exp{border-left:4px solid #d0d7de;padding:6px 10px;margin-bottom:10px}
.exp.passed{border-color:#1a7f37}.exp.failed{border-color:#cf222e}.exp.inconclusive{border-color:#9a6700}
.badge{color:#fff;font-size:11px;font-weight:700;padding:2px 7px;border-radius:10px;text-transform:uppercase}
.num{display:inline-block;margin-left:6px;background:#cf222e;color:#fff;border-radius:50%;width:18px;height:18px;text-align:center;font-size:11px;line-height:18px}
.exp-title{font-weight:600;margin-top:4px}.exp-meta{font-size:12px;color:#57606a}
.exp-figure{font-size:13px;margin-top:2px}.exp-reason{font-size:12px;color:#424a53;margin-top:2px}
.details{margin:0 28px 28px}
table{border-collapse:collapse;width:100%;font-size:13px}td,th{border-bottom:1px solid #eaeef2;padding:5px 8px;text-align:left}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}
.foot{color:#8c959f;font-size:12px}
@media (max-width:900px){main{grid-template-columns:1fr}}
`;

// Hover read-out: the bucket under the pointer, from the figures embedded as JSON. It also marks
// the page with how many chart lines were drawn with a length, which a headless browser can read.
const SCRIPT = `
(function(){
  var buckets = JSON.parse(document.getElementById('buckets').textContent || '[]');
  var readout = document.getElementById('readout');
  function fmt(v, d){ return v === null || v === undefined ? '—' : v.toFixed(d); }
  document.querySelectorAll('svg.chart').forEach(function(svg){
    svg.addEventListener('mousemove', function(ev){
      var box = svg.getBoundingClientRect();
      var scale = 880 / box.width;
      var left = Number(svg.dataset.left), width = Number(svg.dataset.width), duration = Number(svg.dataset.duration);
      var ms = ((ev.clientX - box.left) * scale - left) / width * duration;
      var b = buckets.find(function(k){ return ms >= k.fromMs && ms < k.toMs; });
      if (!b) return;
      readout.textContent = (b.fromMs/1000).toFixed(2) + '–' + (b.toMs/1000).toFixed(2) + ' s: ' + b.requests + ' requests, errors ' + fmt(b.errorPercent,1) + '%, p50 ' + fmt(b.p50Ms,1) + ' ms, p95 ' + fmt(b.p95Ms,1) + ' ms, p99 ' + fmt(b.p99Ms,1) + ' ms';
    });
  });
  var drawn = 0;
  document.querySelectorAll('svg.chart path.line').forEach(function(p){ if (p.getTotalLength() > 0) drawn++; });
  document.documentElement.setAttribute('data-lines-drawn', String(drawn));
  document.documentElement.setAttribute('data-charts', String(document.querySelectorAll('svg.chart').length));
})();
`;
