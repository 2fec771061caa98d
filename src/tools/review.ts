/**
 * The six LLM-backed review tools, under fault's names and argument names: scores, better
 * versions of a function, SLOs and whole-file changes. Each is thin: check the provider, call
 * src/llm, render fault's legacy text shape plus typed structuredContent (docs/design.md,
 * "2. The MCP surface").
 *
 * Arguments are checked first (the file read, the function found); then, with no provider
 * configured, every tool answers at once with isError naming what to set.
 */
import * as z from 'zod';
import { InputError } from '../kernel/errors.js';
import type { LlmProvider, ProviderChoice, SearchContext } from '../llm/index.js';
import { LlmError } from '../llm/errors.js';
import type { ToolAnnotationsExplicit, ToolRegistry } from './define.js';
import { SLO_FORMATS, toOpenSlo, toSloth, type SloFormat } from '../llm/slo-formats.js';
import type { Slo } from '../llm/slo.js';
import type { Concern, DeepFinding } from '../llm/deep-analysis.js';
import type { ExtractedFunction } from '../code/index.js';
import { CONCERNS, SEVERITIES } from '../llm/concerns.js';
import type { ToolContext } from './context.js';

// The LLM clients, prompts, diff library and tree-sitter load on the first call (import() below),
// not when the server starts: the schemas need only the leaf modules above.
const loadLlm = () => import('../llm/index.js');
const loadCode = () => import('../code/index.js');

/** Reads nothing it changes, but calls a remote model whose answers vary. */
const LLM_READ_ONLY: ToolAnnotationsExplicit = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

/** The model must send the whole file back; beyond this size that is neither cheap nor reliable. */
export const MAX_CHANGE_FILE_BYTES = 256 * 1024;
const MAX_SNIPPET_CHARS = 100_000;

const NEEDS_LLM =
  'Needs an LLM provider on the server (an API key, OLLAMA_HOST or --llm-client); fails at once without one.';

/**
 * The SLO result's outline: the fields an agent decides on are typed, the rest (the validated
 * Slo, src/llm/slo.ts) is present but left open, so tools/list stays small.
 */
const SloOutline = z.looseObject({
  type: z.enum(['latency', 'availability', 'error']),
  title: z.string(),
  objective: z.number().describe('percent'),
  threshold: z.number(),
  unit: z.string(),
  window: z.string(),
  sli: z.looseObject({ prometheus: z.string() }),
});

export interface ReviewDependencies {
  /** The provider for one call; default: chosen from the config and the environment each time. */
  provider?: (() => ProviderChoice) | undefined;
  /** Retrieval over the indexed source tree for the suggest tools (RAG); without it the prompt has the snippet alone.
   * */
  searchContext?: SearchContext | undefined;
}

const snippetArgument = z.string().min(1).describe('The code to review, e.g. a function from fault_extract_code_block');
const langArgument = z
  .string()
  .min(1)
  .describe('Its language (python, typescript, go, rust, java, …); with a known grammar, suggested code must parse');
const scoreArgument = (what: string) => z.number().min(0).max(1).describe(what);

/** The provider for one call of `tool`; without one, an input error naming what to set. */
type ProviderFor = (tool: string) => Promise<LlmProvider>;

export function registerReviewTools(tools: ToolRegistry, ctx: ToolContext, deps: ReviewDependencies = {}): void {
  const provider: ProviderFor = async (tool) => {
    const choice = deps.provider ? deps.provider() : (await loadLlm()).createProvider(ctx.config.llm);
    if (!choice.ok) throw new InputError(`${tool} needs an LLM, and ${choice.reason}`);
    return choice.provider;
  };
  registerScoreTools(tools, provider);
  registerSuggestFunctionTools(tools, provider, deps);
  registerSloTool(tools, provider);
  registerFileChangesTool(tools, ctx, provider);
  registerDeepAnalysisTool(tools, ctx, provider, deps);
}

/** fault_score_performance and fault_score_reliability. */
function registerScoreTools(tools: ToolRegistry, provider: ProviderFor): void {
  for (const aspect of ['performance', 'reliability'] as const) {
    const name = `fault_score_${aspect}`;
    tools.register(
      {
        name,
        toolset: 'review',
        title: `Score ${aspect}`,
        description:
          `Rates the ${aspect} of a code snippet from 0 (poor) to 1 ` +
          `(nothing to improve), with one sentence naming the most ` +
          `important ` +
          `${aspect === 'performance' ? 'issue under load' : 'failure-handling gap'}. ` +
          `Text: JSON {"score", "explanation"}; ` +
          `the reply is validated and repaired once if needed. ${NEEDS_LLM}`,
        input: { snippet: snippetArgument, lang: langArgument },
        output: { score: z.number().min(0).max(1), explanation: z.string() },
        annotations: LLM_READ_ONLY,
      },
      async ({ snippet, lang }, call) => {
        checkSnippet(snippet);
        const llm = await provider(name);
        const { scoreSnippet } = await loadLlm();
        const result = await llmCall(() => scoreSnippet(llm, { aspect, snippet, lang }, { signal: call.signal }));
        return { text: JSON.stringify(result), structured: result };
      },
    );
  }
}

/** fault_suggest_better_function_performance and fault_suggest_better_function_reliability. */
function registerSuggestFunctionTools(tools: ToolRegistry, provider: ProviderFor, deps: ReviewDependencies): void {
  for (const aspect of ['performance', 'reliability'] as const) {
    const name = `fault_suggest_better_function_${aspect}`;
    tools.register(
      {
        name,
        toolset: 'review',
        title: `Suggest a ${aspect === 'performance' ? 'faster' : 'more reliable'} function`,
        description:
          `Proposes a ${aspect === 'performance' ? 'faster' : 'more reliable'} ` +
          `version of a function as a unified diff ` +
          '(a/snippet → b/snippet) checked to apply (and, with a known ' +
          'grammar, to parse), with related code from indexed trees ' +
          'as context. Text: the diff in a ```diff block (empty when no ' +
          'change is worth it), after a note when it does not apply. ' +
          `score and target_score: current and wanted scores in [0,1], as from fault_score_${aspect}. ${NEEDS_LLM}`,
        input: {
          snippet: snippetArgument,
          lang: langArgument,
          score: scoreArgument(`Current ${aspect} score in [0,1]`),
          target_score: scoreArgument(`Wanted ${aspect} score in [0,1]`),
        },
        output: {
          diff: z.string().describe("Unified diff from a/snippet to b/snippet; '' when no change is suggested"),
          applies: z
            .boolean()
            .describe('True when the diff applies to the snippet (and, with a known grammar, parses)'),
        },
        annotations: LLM_READ_ONLY,
      },
      async ({ snippet, lang, score, target_score }, call) => {
        checkSnippet(snippet);
        const llm = await provider(name);
        const [{ suggestBetterFunction }, { languageByName }] = await Promise.all([loadLlm(), loadCode()]);
        const suggestion = await llmCall(() =>
          suggestBetterFunction(
            llm,
            {
              aspect,
              snippet,
              lang,
              language: languageByName(lang),
              score,
              targetScore: target_score,
              searchContext: deps.searchContext,
            },
            { signal: call.signal },
          ),
        );
        const block = `\`\`\`diff\n${suggestion.diff}\`\`\``;
        const text = suggestion.applies || !suggestion.note ? block : `${suggestion.note}\n\n${block}`;
        return { text, structured: { diff: suggestion.diff, applies: suggestion.applies } };
      },
    );
  }
}

function registerSloTool(tools: ToolRegistry, provider: ProviderFor): void {
  tools.register(
    {
      name: 'fault_suggest_service_level_objectives_slo',
      toolset: 'review',
      title: 'Suggest SLOs',
      description:
        'Proposes 2-5 SLOs for the code, each {type ' +
        '(latency|availability|error), title, objective (percent), ' +
        'explanation, ' +
        'threshold, unit, window ("30d"), sli: {prometheus (PromQL), ' +
        '"gcp/cloudrun" (a Cloud Monitoring SLO)}}, validated ' +
        "and normalised (fault's shapes accepted), the reply repaired " +
        'once if needed. Text: the JSON array, or the OpenSLO ' +
        `documents / Sloth spec with format. ${NEEDS_LLM}`,
      input: {
        snippet: snippetArgument,
        lang: langArgument,
        format: z
          .enum(SLO_FORMATS)
          .optional()
          .describe(
            'fault (default: the array), openslo (openslo/v1 SLO documents) ' +
              'or sloth (prometheus/v1 spec; ratio SLIs only)',
          ),
        service: z.string().optional().describe('Service name in openslo/sloth output (default "service")'),
      },
      output: {
        slos: z.array(SloOutline),
        openslo: z.array(z.looseObject({ apiVersion: z.string(), kind: z.string() })).optional(),
        sloth: z.looseObject({ version: z.string() }).optional(),
        skipped: z.array(z.string()).optional().describe('SLOs left out of the sloth spec, and why'),
      },
      annotations: LLM_READ_ONLY,
    },
    async ({ snippet, lang, format, service }, call) => {
      checkSnippet(snippet);
      const serviceName = service ?? 'service';
      if (serviceName.trim() === '' || serviceName.length > 63)
        throw new InputError('service: must be 1-63 characters');
      const llm = await provider('fault_suggest_service_level_objectives_slo');
      const { suggestSlos } = await loadLlm();
      const slos = await llmCall(() => suggestSlos(llm, { snippet, lang }, { signal: call.signal }));
      return sloOutcome(slos, format, serviceName);
    },
  );
}

/** The SLOs as asked: fault's array, OpenSLO documents or a Sloth spec (with what it left out). */
function sloOutcome(slos: Slo[], format: SloFormat | undefined, serviceName: string) {
  if (format === 'openslo') {
    const openslo = toOpenSlo(slos, serviceName);
    return {
      text: JSON.stringify(openslo),
      structured: {
        slos,
        openslo: openslo as unknown as Array<{ apiVersion: string; kind: string; [key: string]: unknown }>,
      },
    };
  }
  if (format === 'sloth') {
    const { spec, skipped } = toSloth(slos, serviceName);
    return {
      text: JSON.stringify(spec),
      structured: { slos, sloth: spec as unknown as { version: string; [key: string]: unknown }, skipped },
    };
  }
  return { text: JSON.stringify(slos), structured: { slos } };
}

function registerFileChangesTool(tools: ToolRegistry, ctx: ToolContext, provider: ProviderFor): void {
  tools.register(
    {
      name: 'fault_make_reliability_and_perf_changes',
      toolset: 'review',
      title: 'Propose reliability and performance changes to a file',
      description:
        'Asks the model to rewrite a whole source file for reliability ' +
        'and performance (timeouts, bounded retries, errors, ' +
        'cleanup) keeping its behaviour. Text: JSON {score (of the ' +
        'original, 0-1), explanation, old, new, dependencies (new ' +
        'imports), diff (old→new, computed locally)}; nothing is written. ' +
        'With a known grammar `new` must parse (one repair). ' +
        `Files up to ${MAX_CHANGE_FILE_BYTES / 1024} KB. ${NEEDS_LLM}`,
      input: { file: z.string().describe('Absolute path or file:// URI of the source file') },
      output: {
        score: z.number().min(0).max(1),
        explanation: z.string(),
        old: z.string(),
        new: z.string(),
        dependencies: z.array(z.string()),
        diff: z.string(),
      },
      annotations: LLM_READ_ONLY,
    },
    async ({ file }, call) => {
      const source = await ctx.access.readSourceFile(file, 'file', MAX_CHANGE_FILE_BYTES);
      const llm = await provider('fault_make_reliability_and_perf_changes');
      const [{ proposeFileChanges }, { languageForPath }] = await Promise.all([loadLlm(), loadCode()]);
      const change = await llmCall(() =>
        proposeFileChanges(
          llm,
          { path: source.path, source: source.text, language: languageForPath(source.path, source.text) },
          { signal: call.signal },
        ),
      );
      return { text: JSON.stringify(change), structured: change };
    },
  );
}

function registerDeepAnalysisTool(
  tools: ToolRegistry,
  ctx: ToolContext,
  provider: ProviderFor,
  deps: ReviewDependencies,
): void {
  tools.register(
    {
      name: 'fault_function_reliability_deep_analysis',
      toolset: 'review',
      title: 'Deep analysis of a function',
      description:
        'Extracts func from file and asks the model, with related indexed code, for at most 3 findings per concern ' +
        '(performance, reliability, threat: cold start, dependency failure, exhaustion, races). Each: severity, ' +
        'start_line/end_line in the file, problem, change, and a diff ' +
        '(a/snippet → b/snippet) checked to apply, or "". ' +
        `Text: JSON {findings}. ${NEEDS_LLM}`,
      input: {
        file: z.string().describe('Absolute path or file:// URI of the source file'),
        lang: z.string().describe('Its language, as said to the model (default: from the extension)'),
        func: z.string().describe('Function name: bare, qualified (Class.method), or with :LINE'),
        concerns: z
          .array(z.string())
          .optional()
          .describe('Any of performance, reliability, threat (default/empty: all)'),
      },
      output: {
        function: z.looseObject({ qualified_name: z.string(), start_line: z.number(), end_line: z.number() }),
        findings: z.array(
          z.looseObject({
            concern: z.enum(CONCERNS),
            severity: z.enum(SEVERITIES),
            start_line: z.number(),
            end_line: z.number(),
            problem: z.string(),
            change: z.string(),
            diff: z.string(),
          }),
        ),
      },
      annotations: LLM_READ_ONLY,
    },
    async ({ file, lang, func, concerns }, call) => {
      const chosen = checkConcerns(concerns);
      const source = await ctx.access.readSourceFile(file, 'file', MAX_CHANGE_FILE_BYTES);
      const [{ deepAnalysis }, { extractFunction, requireLanguageForPath }] = await Promise.all([
        import('../llm/deep-analysis.js'),
        loadCode(),
      ]);
      const extracted = await extractFunction(source.text, requireLanguageForPath(source.path, source.text), func, {
        document: source.path,
      });
      const llm = await provider('fault_function_reliability_deep_analysis');
      const findings = await llmCall(() =>
        deepAnalysis(
          llm,
          {
            file: source.path,
            lang: lang.trim() || extracted.language,
            snippet: extracted.full,
            startLine: extracted.startLine,
            endLine: extracted.endLine,
            concerns: chosen,
            searchContext: deps.searchContext,
          },
          { signal: call.signal },
        ),
      );
      return deepAnalysisOutcome(extracted, findings);
    },
  );
}

/** The findings under the tool's snake_case names; the text carries the findings alone. */
function deepAnalysisOutcome(extracted: ExtractedFunction, findings: DeepFinding[]) {
  const structured = {
    function: { qualified_name: extracted.qualifiedName, start_line: extracted.startLine, end_line: extracted.endLine },
    findings: findings.map((finding) => ({
      concern: finding.concern,
      severity: finding.severity,
      start_line: finding.startLine,
      end_line: finding.endLine,
      problem: finding.problem,
      change: finding.change,
      diff: finding.diff,
    })),
  };
  return { text: JSON.stringify({ findings: structured.findings }), structured };
}

function checkConcerns(concerns: string[] | undefined): Concern[] {
  if (concerns === undefined || concerns.length === 0) return [...CONCERNS];
  const unknown = concerns.filter((concern) => !(CONCERNS as readonly string[]).includes(concern));
  if (unknown.length > 0) {
    throw new InputError(
      `concerns: ${unknown
        .slice(0, 5)
        .map((c) => JSON.stringify(c.slice(0, 40)))
        .join(', ')} not accepted; accepted: ${CONCERNS.join(', ')}`,
    );
  }
  return [...new Set(concerns)] as Concern[];
}

function checkSnippet(snippet: string): void {
  if (snippet.trim() === '') throw new InputError('snippet: is blank; give the code to review');
  if (snippet.length > MAX_SNIPPET_CHARS) {
    throw new InputError(
      `snippet: is ${snippet.length} characters; at most ${MAX_SNIPPET_CHARS} are accepted (send one function)`,
    );
  }
}

/**
 * An LLM failure is an expected outcome with a message written for the caller, so it is answered
 * like an input error (its text as is, no stack in the log); anything else, cancellation included,
 * passes through to the registry.
 */
async function llmCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof LlmError) throw new InputError(`LLM ${error.kind.replace('_', ' ')}: ${error.message}`);
    throw error;
  }
}
