/**
 * Inline SVG charts for the HTML report: a time axis shared by every chart (0 … the run's end), line
 * series with gaps where a bucket had no request, shaded bands for fault windows, vertical markers
 * for moments (an abort, an expectation breaking). Plain strings, no library: the page opens with
 * no network.
 */

export interface Band {
  fromMs: number;
  toMs: number;
  label: string;
  color: string;
  /** Drawn hatched: planned, never switched on. */
  planned?: boolean;
}

export interface Marker {
  atMs: number;
  label: string;
  color: string;
}

export interface Series {
  name: string;
  color: string;
  points: Array<{ ms: number; value: number | null }>;
  area?: boolean;
}

export const WIDTH = 880;
/** Wide enough for a lane's label: every chart shares it, so their time axes line up. */
const LEFT = 150;
const RIGHT = 16;
const TOP = 30;
const BOTTOM = 26;

export const escapeHtml = (text: string): string =>
  text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A round axis maximum and its ticks: 1, 2, 2.5 or 5 × a power of ten. */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(6)));
  return ticks;
}

function timeTicks(durationMs: number): number[] {
  const step =
    [100, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000].find(
      (s) => durationMs / s <= 10,
    ) ?? 600_000;
  const ticks: number[] = [];
  for (let t = 0; t <= durationMs; t += step) ticks.push(t);
  return ticks;
}

const seconds = (ms: number): string =>
  ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(ms % 100 === 0 ? 1 : 2)}s`;

export interface ChartOptions {
  id: string;
  title: string;
  unit: string;
  durationMs: number;
  height: number;
  series: Series[];
  bands: Band[];
  markers: Marker[];
  /** Fixed top of the value axis (e.g. 100 for percentages). */
  maxValue?: number;
}

export function lineChart(options: ChartOptions): string {
  const { durationMs, height } = options;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = height - TOP - BOTTOM;
  const values = options.series.flatMap((series) => series.points.map((point) => point.value ?? 0));
  const ticks = niceTicks(options.maxValue ?? Math.max(...values, 0) * 1.1);
  const top = ticks[ticks.length - 1]!;
  const x = (ms: number): number => LEFT + (Math.min(Math.max(ms, 0), durationMs) / durationMs) * plotWidth;
  const y = (value: number): number => TOP + plotHeight - (Math.min(value, top) / top) * plotHeight;
  const parts: string[] = [];
  parts.push(
    `<svg class="chart" id="${options.id}" viewBox="0 0 ${WIDTH} ` +
      `${height}" role="img" aria-label="${escapeHtml(options.title)}" ` +
      `data-duration="${durationMs}" data-left="${LEFT}" ` +
      `data-width="${plotWidth}">`,
  );
  parts.push(
    `<defs><pattern id="${options.id}-hatch" width="6" height="6" ` +
      `patternUnits="userSpaceOnUse" ` +
      `patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" ` +
      `stroke="#b0b0b0" stroke-width="2"/></pattern></defs>`,
  );
  for (const band of options.bands) {
    const bx = x(band.fromMs);
    const width = Math.max(1, x(band.toMs) - bx);
    parts.push(
      `<rect class="band" x="${bx.toFixed(1)}" y="${TOP}" ` +
        `width="${width.toFixed(1)}" height="${plotHeight}" ` +
        `fill="${band.planned ? `url(#${options.id}-hatch)` : band.color}" ` +
        `opacity="${band.planned ? 0.5 : 0.16}"><title>${escapeHtml(band.label)}</title></rect>`,
    );
  }
  for (const tick of ticks) {
    parts.push(
      `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(tick).toFixed(1)}" y2="${y(tick).toFixed(1)}" class="grid"/>`,
    );
    parts.push(
      `<text x="${LEFT - 6}" y="${(y(tick) + 4).toFixed(1)}" ` +
        `class="tick" ` +
        `text-anchor="end">${tick}${options.unit === '%' ? '%' : ''}</text>`,
    );
  }
  for (const tick of timeTicks(durationMs))
    parts.push(
      `<text x="${x(tick).toFixed(1)}" y="${height - 8}" class="tick" text-anchor="middle">${seconds(tick)}</text>`,
    );
  parts.push(
    `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${TOP + plotHeight}" y2="${TOP + plotHeight}" class="axis"/>`,
  );
  for (const series of options.series) {
    const segments: string[][] = [];
    let current: string[] | undefined;
    for (const point of series.points) {
      if (point.value === null) {
        current = undefined;
        continue;
      }
      if (!current) segments.push((current = []));
      current.push(`${x(point.ms).toFixed(1)},${y(point.value).toFixed(1)}`);
    }
    for (const segment of segments) {
      // A lone point is drawn as a short tick, so one bucket between gaps still shows.
      const points =
        segment.length === 1 ? [segment[0]!, segment[0]!.replace(/^([\d.]+)/, (m) => String(Number(m) + 2))] : segment;
      if (series.area) {
        const first = points[0]!.split(',')[0];
        const last = points[points.length - 1]!.split(',')[0];
        parts.push(
          `<path class="area" d="M${first},${TOP + plotHeight} L${points.join(' L')} ` +
            `L${last},${TOP + plotHeight} Z" fill="${series.color}" ` +
            `opacity="0.25"/>`,
        );
      }
      parts.push(
        `<path class="line" data-series="${escapeHtml(series.name)}" ` +
          `d="M${points.join(' L')}" stroke="${series.color}" fill="none" ` +
          `stroke-width="2" stroke-linejoin="round"/>`,
      );
    }
  }
  for (const marker of options.markers) {
    const mx = x(marker.atMs).toFixed(1);
    parts.push(
      `<g class="marker"><line x1="${mx}" x2="${mx}" y1="${TOP}" ` +
        `y2="${TOP + plotHeight}" stroke="${marker.color}" ` +
        `stroke-width="1.5" stroke-dasharray="4 3"/><text x="${mx}" ` +
        `y="${TOP - 4}" fill="${marker.color}" class="marker-label" ` +
        `text-anchor="middle">${escapeHtml(marker.label)}</text></g>`,
    );
  }
  parts.push(
    `<rect class="hover" x="${LEFT}" y="${TOP}" width="${plotWidth}" height="${plotHeight}" fill="transparent"/>`,
  );
  parts.push(`<text x="${LEFT}" y="12" class="chart-title">${escapeHtml(options.title)}</text>`);
  const legendX = WIDTH - RIGHT;
  options.series
    .slice()
    .reverse()
    .forEach((series, index) =>
      parts.push(
        `<text x="${legendX - index * 70}" y="12" class="legend" ` +
          `text-anchor="end" fill="${series.color}">■ ` +
          `${escapeHtml(series.name)}</text>`,
      ),
    );
  parts.push('</svg>');
  return parts.join('');
}

export interface Lane {
  label: string;
  bars: Array<{ fromMs: number; toMs: number; color: string; title: string; planned?: boolean }>;
  dots?: Array<{ atMs: number; ok: boolean; title: string }>;
}

/** The timeline strip: one lane per step or check, bars where it acted, dots where a check probed. */
export function laneChart(id: string, durationMs: number, lanes: Lane[], phases: Band[]): string {
  const laneHeight = 22;
  const height = TOP + lanes.length * laneHeight + BOTTOM;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const x = (ms: number): number => LEFT + (Math.min(Math.max(ms, 0), durationMs) / durationMs) * plotWidth;
  const parts: string[] = [
    `<svg class="chart lanes" id="${id}" viewBox="0 0 ${WIDTH} ` +
      `${height}" role="img" aria-label="timeline" ` +
      `data-duration="${durationMs}" data-left="${LEFT}" ` +
      `data-width="${plotWidth}">`,
  ];
  for (const phase of phases)
    parts.push(
      `<rect x="${x(phase.fromMs).toFixed(1)}" y="${TOP}" ` +
        `width="${Math.max(0, x(phase.toMs) - x(phase.fromMs)).toFixed(1)}" ` +
        `height="${lanes.length * laneHeight}" fill="${phase.color}" ` +
        `opacity="0.08"/><text x="${(x(phase.fromMs) + 3).toFixed(1)}" ` +
        `y="${TOP - 5}" class="tick">${escapeHtml(phase.label)}</text>`,
    );
  lanes.forEach((lane, index) => {
    const top = TOP + index * laneHeight;
    parts.push(
      `<text x="${LEFT - 6}" y="${top + 15}" class="lane-label" ` +
        `text-anchor="end">${escapeHtml(lane.label.length > 22 ? `${lane.label.slice(0, 21)}…` : lane.label)}<title>${escapeHtml(lane.label)}</title></text>`,
    );
    for (const bar of lane.bars) {
      parts.push(
        `<rect class="bar" x="${x(bar.fromMs).toFixed(1)}" y="${top + 3}" ` +
          `width="${Math.max(2, x(bar.toMs) - x(bar.fromMs)).toFixed(1)}" ` +
          `height="${laneHeight - 6}" rx="3" fill="${bar.color}" ` +
          `opacity="${bar.planned ? 0.35 : 0.85}"><title>${escapeHtml(bar.title)}</title></rect>`,
      );
    }
    for (const dot of lane.dots ?? [])
      parts.push(
        `<circle cx="${x(dot.atMs).toFixed(1)}" ` +
          `cy="${top + laneHeight / 2}" r="3.5" ` +
          `fill="${dot.ok ? '#1a7f37' : '#cf222e'}"><title>${escapeHtml(dot.title)}</title></circle>`,
      );
  });
  for (const tick of timeTicks(durationMs))
    parts.push(
      `<text x="${x(tick).toFixed(1)}" y="${height - 8}" class="tick" text-anchor="middle">${seconds(tick)}</text>`,
    );
  parts.push('</svg>');
  return parts.join('');
}
