/**
 * Deep analysis of one function (fault's undocumented `fault_function_reliability_deep_analysis`):
 * findings per concern (performance, reliability, threat), each with a severity, the line range in
 * the file, what goes wrong, a suggested change and a diff. Nothing the model says is trusted:
 * line ranges must lie inside the function, concerns must be the ones asked for, and every diff
 * must apply to the function (the repair turn shows the model which did not); the diffs returned
 * are recomputed locally from the applied result.
 */
import { z } from 'zod';
import { lenientText } from './lenient.js';
import { applyModelPatch, unifiedDiff } from './patch.js';
import { fenced, renderPrompt } from './prompts.js';
import type { CallOptions, LlmProvider } from './provider.js';
import type { RelatedCode, SearchContext } from './suggest.js';
import { CONCERNS, SEVERITIES } from './concerns.js';

export { CONCERNS, SEVERITIES };
export type Concern = (typeof CONCERNS)[number];

const Finding = z.object({
  concern: z.enum(CONCERNS),
  severity: z.enum(SEVERITIES),
  start_line: z.number().int().min(1),
  end_line: z.number().int().min(1),
  problem: lenientText(z.string().min(1)),
  change: lenientText(z.string().min(1)),
  diff: z.string(),
});
const Findings = z.object({ findings: z.array(Finding).max(9) });

export interface DeepFinding {
  concern: Concern;
  severity: (typeof SEVERITIES)[number];
  startLine: number;
  endLine: number;
  problem: string;
  change: string;
  /** Unified diff a/snippet → b/snippet, checked to apply; '' when the change is not a code edit. */
  diff: string;
}

export interface DeepAnalysisInput {
  file: string;
  lang: string;
  /** The function as written, and where it lies in the file (1-based, inclusive). */
  snippet: string;
  startLine: number;
  endLine: number;
  concerns: Concern[];
  searchContext?: SearchContext | undefined;
}

const MAX_RELATED = 4;
const MAX_RELATED_CHARS = 3_000;

export function deepAnalysis(
  provider: LlmProvider,
  input: DeepAnalysisInput,
  options: CallOptions = {},
): Promise<DeepFinding[]> {
  return provider.conversation(options, async (signal) => {
    const snippet = input.snippet.endsWith('\n') ? input.snippet : `${input.snippet}\n`;
    const related = input.searchContext ? (await input.searchContext(input.snippet, signal)).slice(0, MAX_RELATED) : [];
    const messages = await renderPrompt('deep-analysis', {
      lang: input.lang,
      file: input.file,
      start_line: String(input.startLine),
      end_line: String(input.endLine),
      concerns: input.concerns.join(', '),
      snippet: fenced(snippet, input.lang),
      context: related.length > 0 ? renderRelated(related, input.lang) : '',
    });
    const { findings } = await provider.structured(messages, Findings, {
      name: 'deep_analysis',
      signal,
      check: (value) => problemWith(value.findings, input, snippet),
    });
    return findings.map((finding) => ({
      concern: finding.concern,
      severity: finding.severity,
      startLine: finding.start_line,
      endLine: finding.end_line,
      problem: finding.problem,
      change: finding.change,
      diff: finding.diff.trim() === '' ? '' : recomputed(snippet, finding.diff),
    }));
  });
}

/** What the schema cannot say: concerns asked for, lines inside the function, diffs that apply. */
function problemWith(
  findings: Array<z.infer<typeof Finding>>,
  input: DeepAnalysisInput,
  snippet: string,
): string | undefined {
  for (const [index, finding] of findings.entries()) {
    const where = `findings.${index}`;
    if (!input.concerns.includes(finding.concern))
      return `${where}.concern: "${finding.concern}" was not asked for (${input.concerns.join(', ')})`;
    if (
      finding.start_line > finding.end_line ||
      finding.start_line < input.startLine ||
      finding.end_line > input.endLine
    ) {
      return (
        `${where}: lines ${finding.start_line}-${finding.end_line} are ` +
        `not inside the function (lines ${input.startLine}-${input.endLine} ` +
        `of the file)`
      );
    }
    if (finding.diff.trim() !== '') {
      const applied = applyModelPatch(snippet, stripFence(finding.diff));
      if (!applied.ok) return `${where}.diff does not apply to the function: ${applied.reason}`;
    }
  }
  return undefined;
}

function recomputed(snippet: string, diff: string): string {
  const applied = applyModelPatch(snippet, stripFence(diff));
  return applied.ok ? unifiedDiff('a/snippet', 'b/snippet', snippet, applied.result) : '';
}

/** A diff sent inside a ```diff fence within the JSON string. */
function stripFence(diff: string): string {
  const match = /^\s*```[^\n]*\n([\s\S]*?)\n?```\s*$/.exec(diff);
  return match ? match[1]! : diff;
}

function renderRelated(related: RelatedCode[], lang: string): string {
  const parts = related.map((chunk) => {
    const text = chunk.text.length > MAX_RELATED_CHARS ? `${chunk.text.slice(0, MAX_RELATED_CHARS)}\n…` : chunk.text;
    return `${chunk.path}:${chunk.startLine}-${chunk.endLine}\n${fenced(text, lang)}`;
  });
  return `\nRelated code from the same project, for reference only:\n\n${parts.join('\n\n')}\n`;
}
