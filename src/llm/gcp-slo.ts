/**
 * The Cloud Monitoring ServiceLevelObjective an SLO carries for Cloud Run (`sli["gcp/cloudrun"]`):
 * its schema, and the normalisation of the shapes models write, so that the answer a model gives
 * the way the reference tool's guide shows it is accepted rather than repaired or refused.
 *
 * The guide's example, verbatim in the tests, writes `"calendarPeriod": "NONE"` (meaning: no
 * calendar period, i.e. a rolling window), a windows-based SLI whose threshold names
 * `basicSliPerformance` (Cloud Monitoring's basic availability/latency SLI) or no performance at
 * all. Normalised:
 * - calendarPeriod NONE / UNSPECIFIED / "" / null: absent; in any case otherwise (`month`);
 * - rollingPeriod in any duration form (`30d`, `300`, 300): whole seconds (`2592000s`); with a
 *   calendar period too, the rolling one is kept; with neither, the SLO's own window;
 * - goal as a percentage (95) or a string: the fraction; absent: the objective / 100;
 * - displayName absent: the SLO's title;
 * - a windows-based threshold with no performance: the basic SLI of the SLO's type (latency: its
 *   threshold as a duration; otherwise availability); threshold as a percentage or absent: the
 *   fraction, or the goal; windowPeriod in any duration form: whole seconds.
 * Anything else is left for the schema to refuse, and the reply to be repaired once.
 */
import { z } from 'zod';

const SECONDS = /^[1-9]\d*s$/;

const DistributionCut = z.object({
  distributionCut: z.object({
    distributionFilter: z.string().min(1),
    range: z.object({ min: z.number(), max: z.number() }),
  }),
});

const GoodTotalRatio = z.object({
  goodTotalRatio: z.object({ goodServiceFilter: z.string().min(1), totalServiceFilter: z.string().min(1) }),
});

const RequestBased = z.union([DistributionCut, GoodTotalRatio]);

/** Cloud Monitoring's basic SLI (Cloud Run's built-in availability or latency), optionally narrowed. */
const BasicSli = z
  .object({
    method: z.array(z.string()).nullable().optional(),
    location: z.array(z.string()).nullable().optional(),
    version: z.array(z.string()).nullable().optional(),
    availability: z.object({}).nullable().optional(),
    latency: z
      .object({ threshold: z.string().regex(/^\d+(\.\d+)?s$/, 'must be a duration in seconds, e.g. "0.3s"') })
      .nullable()
      .optional(),
  })
  .refine(
    (sli) => (sli.availability == null) !== (sli.latency == null),
    'give exactly one of availability and latency',
  );

/** A window is good when its performance meets `threshold`. */
const WindowsBased = z.object({
  goodTotalRatioThreshold: z.union([
    z.object({ performance: RequestBased, threshold: z.number().gt(0).lte(1) }),
    z.object({ basicSliPerformance: BasicSli, threshold: z.number().gt(0).lte(1) }),
  ]),
  windowPeriod: z.string().regex(SECONDS, 'must be a whole number of seconds, e.g. "60s"'),
});

/**
 * A request-based, windows-based or basic SLI, over a rolling period or a calendar period (exactly
 * one of the two).
 */
export const CloudRunSlo = z
  .object({
    displayName: z.string().min(1),
    goal: z.number().gt(0).lt(1),
    rollingPeriod: z
      .string()
      .regex(SECONDS, 'must be a whole number of seconds, e.g. "2592000s"')
      .nullable()
      .optional(),
    calendarPeriod: z.enum(['DAY', 'WEEK', 'FORTNIGHT', 'MONTH', 'QUARTER', 'HALF', 'YEAR']).nullable().optional(),
    serviceLevelIndicator: z.union([
      z.object({ requestBased: RequestBased }),
      z.object({ windowsBased: WindowsBased }),
      z.object({ basicSli: BasicSli }),
    ]),
  })
  .superRefine((slo, ctx) => {
    // Nullable as well as optional: OpenAI's structured output wants every field present.
    if ((slo.rollingPeriod == null) === (slo.calendarPeriod == null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['rollingPeriod'],
        message: 'give exactly one of rollingPeriod and calendarPeriod',
      });
    }
  });

/** What of the SLO around it the normalisation draws on. */
export interface SloContext {
  type?: unknown;
  title?: unknown;
  objective?: unknown;
  threshold?: unknown;
  unit?: unknown;
  window?: unknown;
}

const NO_CALENDAR = new Set(['', 'NONE', 'CALENDAR_PERIOD_UNSPECIFIED', 'UNSPECIFIED', 'ROLLING']);
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** `gcp` with the forms above normalised (a new object; anything not an object is returned as is). */
export function normaliseCloudRunSlo(gcp: unknown, slo: SloContext): unknown {
  if (!isObject(gcp)) return gcp;
  const out: Record<string, unknown> = { ...gcp };
  if (typeof out.calendarPeriod === 'string') {
    const period = out.calendarPeriod.trim().toUpperCase();
    out.calendarPeriod = period;
    if (NO_CALENDAR.has(period)) delete out.calendarPeriod;
  } else if (out.calendarPeriod === null) delete out.calendarPeriod;
  if (out.rollingPeriod === null || out.rollingPeriod === '') delete out.rollingPeriod;
  if (out.rollingPeriod !== undefined) {
    out.rollingPeriod = wholeSeconds(out.rollingPeriod) ?? out.rollingPeriod;
    delete out.calendarPeriod;
  } else if (out.calendarPeriod === undefined) {
    const window = wholeSeconds(slo.window);
    if (window !== undefined) out.rollingPeriod = window;
  }
  const objective = numberOf(slo.objective);
  const goal = fraction(out.goal) ?? (objective !== undefined ? objective / 100 : undefined);
  if (goal !== undefined) out.goal = goal;
  if ((typeof out.displayName !== 'string' || out.displayName.trim() === '') && typeof slo.title === 'string')
    out.displayName = slo.title;
  if (isObject(out.serviceLevelIndicator) && isObject(out.serviceLevelIndicator.windowsBased)) {
    out.serviceLevelIndicator = {
      ...out.serviceLevelIndicator,
      windowsBased: normaliseWindowsBased(out.serviceLevelIndicator.windowsBased, slo, goal),
    };
  }
  return out;
}

function normaliseWindowsBased(
  windows: Record<string, unknown>,
  slo: SloContext,
  goal: number | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...windows };
  out.windowPeriod = wholeSeconds(out.windowPeriod) ?? out.windowPeriod;
  if (!isObject(out.goodTotalRatioThreshold)) return out;
  const threshold: Record<string, unknown> = { ...out.goodTotalRatioThreshold };
  if (threshold.performance === undefined && threshold.basicSliPerformance === undefined) {
    const basic = basicSliOf(slo);
    if (basic) threshold.basicSliPerformance = basic;
  }
  if (isObject(threshold.basicSliPerformance) && isObject(threshold.basicSliPerformance.latency)) {
    const latency = threshold.basicSliPerformance.latency;
    const seconds = durationSeconds(latency.threshold, 's');
    if (seconds !== undefined)
      threshold.basicSliPerformance = {
        ...threshold.basicSliPerformance,
        latency: { ...latency, threshold: `${round(seconds)}s` },
      };
  }
  threshold.threshold = fraction(threshold.threshold) ?? goal ?? threshold.threshold;
  out.goodTotalRatioThreshold = threshold;
  return out;
}

/** The basic SLI an SLO of this type measures: latency under its threshold, else availability. */
function basicSliOf(slo: SloContext): Record<string, unknown> | undefined {
  if (slo.type !== 'latency') return { availability: {} };
  const seconds = durationSeconds(slo.threshold, typeof slo.unit === 'string' && slo.unit !== '' ? slo.unit : 'ms');
  return seconds === undefined ? undefined : { latency: { threshold: `${round(seconds)}s` } };
}

/** "30d", "300", 300, "300s" → "2592000s", "300s"; undefined when it is not a whole number of seconds above 0. */
function wholeSeconds(value: unknown): string | undefined {
  const seconds = durationSeconds(value, 's');
  return seconds !== undefined && seconds >= 1 && Number.isInteger(seconds) ? `${seconds}s` : undefined;
}

/** A duration ("0.3s", "300ms", "5m", 300, "300") in seconds; a bare number is in `bareUnit`. */
function durationSeconds(value: unknown, bareUnit: string): number | undefined {
  if (typeof value === 'number')
    return Number.isFinite(value) && value > 0 ? value * (UNIT_SECONDS[bareUnit] ?? 1) : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/i.exec(value);
  if (!match) return undefined;
  const size = UNIT_SECONDS[(match[2] ?? bareUnit).toLowerCase()];
  const seconds = Number(match[1]) * (size ?? 1);
  return seconds > 0 ? seconds : undefined;
}

/** A ratio in (0, 1], from a fraction, a percentage (95) or a string of either. */
function fraction(value: unknown): number | undefined {
  const n = numberOf(value);
  if (n === undefined || n <= 0) return undefined;
  return n > 1 && n <= 100 ? round(n / 100) : n;
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$/.test(value)) return Number(value);
  return undefined;
}

function round(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
