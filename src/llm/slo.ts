/**
 * Suggests service level objectives for a snippet, validated field by field: the reference
 * tool's SLO shape, with its window, units, objective range and PromQL checked, and its Cloud
 * Monitoring SLO normalised (gcp-slo.ts).
 */
import { z } from 'zod';
import { lenientNumber, lenientText, lenientWrappedList } from './lenient.js';
import { checkPromQL } from './promql.js';
import { CloudRunSlo, normaliseCloudRunSlo } from './gcp-slo.js';
import { fenced, renderPrompt } from './prompts.js';
import type { CallOptions, LlmProvider } from './provider.js';

const Window = z
  .string()
  .regex(/^[1-9]\d*(s|m|h|d|w)$/, 'must be a whole number followed by s, m, h, d or w, e.g. "300s"');

const StrictSlo = z
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

/**
 * An SLO as validated, after the normalisation of its Cloud Monitoring SLO (gcp-slo.ts): the
 * reference tool's documented shape is accepted as it is written.
 */
export const Slo = z.preprocess((value) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const slo = value as Record<string, unknown>;
  const sli = slo.sli;
  if (typeof sli !== 'object' || sli === null || Array.isArray(sli) || !('gcp/cloudrun' in sli)) return value;
  return {
    ...slo,
    sli: { ...sli, 'gcp/cloudrun': normaliseCloudRunSlo((sli as Record<string, unknown>)['gcp/cloudrun'], slo) },
  };
}, StrictSlo);
export type Slo = z.infer<typeof Slo>;

/** The reply's root: OpenAI's structured output wants an object, not a bare array (accepted too). */
export const SloList = lenientWrappedList('slos', z.object({ slos: z.array(Slo).min(1).max(10) }));

export interface SloInput {
  snippet: string;
  lang: string;
}

export async function suggestSlos(provider: LlmProvider, input: SloInput, options: CallOptions = {}): Promise<Slo[]> {
  const messages = await renderPrompt('slo', { lang: input.lang, snippet: fenced(input.snippet, input.lang) });
  const { slos } = await provider.structured(messages, SloList, {
    name: 'service_level_objectives',
    signal: options.signal,
  });
  return slos;
}
