/** Scores a snippet for performance or reliability: `{score ∈ [0,1], explanation}`. */
import { z } from 'zod';
import { lenientNumber, lenientText } from './lenient.js';
import { fenced, renderPrompt } from './prompts.js';
import type { CallOptions, LlmProvider } from './provider.js';

export type ReviewAspect = 'performance' | 'reliability';

export const CodeScore = z.object({
  score: lenientNumber(z.number().min(0).max(1).describe('0 = poor, 1 = nothing meaningful to improve')),
  explanation: lenientText(z.string().min(1).describe('one sentence naming the most important issue')),
});
export type CodeScore = z.infer<typeof CodeScore>;

export interface ScoreInput {
  aspect: ReviewAspect;
  snippet: string;
  lang: string;
}

export async function scoreSnippet(
  provider: LlmProvider,
  input: ScoreInput,
  options: CallOptions = {},
): Promise<CodeScore> {
  const messages = await renderPrompt(`score-${input.aspect}`, {
    lang: input.lang,
    snippet: fenced(input.snippet, input.lang),
  });
  return provider.structured(messages, CodeScore, { name: 'code_score', signal: options.signal });
}
