/**
 * Suggests service level objectives for a snippet, validated field by field: the reference
 * tool's SLO shape, with its window, units, objective range and PromQL checked.
 */
import { z } from 'zod';
import { lenientNumber, lenientText, lenientWrappedList } from './lenient.js';
import { checkPromQL } from './promql.js';
import { fenced, renderPrompt } from './prompts.js';
import type { CallOptions, LlmProvider } from './provider.js';

const Window = z
  .string()
  .regex(/^[1-9]\d*(s|m|h|d|w)$/, 'must be a whole number followed by s, m, h, d or w, e.g. "300s"');

const DistributionCut = z.object({
  distributionCut: z.object({
    distributionFilter: z.string().min(1),
    range: z.object({ min: z.number(), max: z.number() }),
  }),
});

const GoodTotalRatio = z.object({
  goodTotalRatio: z.object({ goodServiceFilter: z.string().min(1), totalServiceFilter: z.string().min(1) }),
});

/**
 * Cloud Monitoring's windows-based SLI, in the shape the reference tool documents: a window is
 * good when its request-based performance meets `threshold`.
 */
const WindowsBased = z.object({
  goodTotalRatioThreshold: z.object({
    performance: z.union([DistributionCut, GoodTotalRatio]),
    threshold: z.number().gt(0).lte(1),
  }),
  windowPeriod: z.string().regex(/^[1-9]\d*s$/, 'must be a whole number of seconds, e.g. "60s"'),
});

/**
 * A Cloud Monitoring ServiceLevelObjective for a Cloud Run service: a request-based or
 * windows-based SLI, over a rolling period or a calendar period (exactly one of the two).
 */
const CloudRunSlo = z
  .object({
    displayName: z.string().min(1),
    goal: z.number().gt(0).lt(1),
    rollingPeriod: z.string().regex(/^[1-9]\d*s$/, 'must be a whole number of seconds, e.g. "2592000s"').nullable().optional(),
    calendarPeriod: z.enum(['DAY', 'WEEK', 'FORTNIGHT', 'MONTH', 'QUARTER', 'HALF', 'YEAR']).nullable().optional(),
    serviceLevelIndicator: z.union([
      z.object({ requestBased: z.union([DistributionCut, GoodTotalRatio]) }),
      z.object({ windowsBased: WindowsBased }),
    ]),
  })
  .superRefine((slo, ctx) => {
    // Nullable as well as optional: OpenAI's structured output wants every field present.
    if ((slo.rollingPeriod == null) === (slo.calendarPeriod == null)) {
      ctx.addIssue({ code: 'custom', path: ['rollingPeriod'], message: 'give exactly one of rollingPeriod and calendarPeriod' });
    }
  });

export const Slo = z
  .object({
    type: z.enum(['latency', 'availability', 'error']),
    title: z.string().min(1),
    objective: lenientNumber(z.number().min(0).lt(100).describe('target percentage, e.g. 99.5')),
    explanation: lenientText(z.string().min(1)),
    threshold: lenientNumber(z.number()),
    unit: z.enum(['ms', 's', '%', '']),
    window: Window,
    sli: z.object({
      prometheus: z.string().min(1),
      'gcp/cloudrun': CloudRunSlo,
    }),
  })
  .superRefine((slo, ctx) => {
    const promqlProblem = checkPromQL(slo.sli.prometheus);
    if (promqlProblem) ctx.addIssue({ code: 'custom', path: ['sli', 'prometheus'], message: promqlProblem });
    if (slo.type === 'latency' && slo.unit !== 'ms' && slo.unit !== 's') {
      ctx.addIssue({ code: 'custom', path: ['unit'], message: 'a latency SLO needs unit "ms" or "s"' });
    }
    if (slo.threshold < 0) ctx.addIssue({ code: 'custom', path: ['threshold'], message: 'must not be negative' });
    const goal = slo.sli['gcp/cloudrun'].goal;
    if (Math.abs(goal * 100 - slo.objective) > 0.01) {
      ctx.addIssue({
        code: 'custom',
        path: ['sli', 'gcp/cloudrun', 'goal'],
        message: `must be the objective as a fraction (${slo.objective / 100}), got ${goal}`,
      });
    }
  });
export type Slo = z.infer<typeof Slo>;

/** The reply's root: OpenAI's structured output wants an object, not a bare array (accepted too). */
export const SloList = lenientWrappedList('slos', z.object({ slos: z.array(Slo).min(1).max(10) }));

export interface SloInput {
  snippet: string;
  lang: string;
}

export async function suggestSlos(provider: LlmProvider, input: SloInput, options: CallOptions = {}): Promise<Slo[]> {
  const messages = await renderPrompt('slo', { lang: input.lang, snippet: fenced(input.snippet, input.lang) });
  const { slos } = await provider.structured(messages, SloList, { name: 'service_level_objectives', signal: options.signal });
  return slos;
}
