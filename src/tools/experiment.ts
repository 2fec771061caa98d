/**
 * Experiments for agents (toolset family `experiment`): fault_run_experiment runs an experiment
 * given as an object (or its YAML/JSON text) and answers the report and the verdicts, with
 * progress and cancellation; fault_suggest_experiment reads an app's code and proposes a starter
 * experiment for its outbound dependencies. The domain work is src/experiment's.
 */
import * as z from 'zod';
import { CancelledError, InputError } from '../kernel/errors.js';
import type { ToolAnnotationsExplicit, ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';
import { programsFor } from './programs.js';
import type { ExperimentResult } from '../experiment/index.js';

/**
 * Whatever the client sends as `experiment` (an object, or YAML/JSON text) is carried to the
 * handler as it is, under a key no file can have, and read there by the experiment's own reader
 * against the published experiment schema: the tool schema below describes the common forms for
 * agents and must not refuse the others (objects in expect, rollbacks, toolcall steps…).
 */
const RAW = '\u0000raw';

const EXPERIMENT_DESCRIPTION =
  'The experiment as an object (or its YAML/JSON text): {title, ' +
  'load: {url, rps, duration, timeout}, proxies: ' +
  '["34000=127.0.0.1:7001#weather"], steady_state: ["p95 < 300ms", ' +
  '"errors < 1%"], ' +
  'method: [{at: "5s", for: "10s", fault: {target: "weather", type: ' +
  '"error", statusCode: 503}}, {at, for, toolcall: {command|url, ' +
  'plan, calls}}, {at, probe: {command|url}}], ' +
  'expect: ["errors < 5%", "GET /health -> $.circuit == ' +
  '\\"open\\"", {command: ["npm", "test"]}], recover_within: "5s", ' +
  'abort_when: "errors > 50% for 3s"}. ' +
  "mcp-chaos-monkey's scenario JSON is accepted as it is. Full schema: `faultline experiment schema`.";

const publishedExperiment = z.looseObject({
  title: z.string().optional(),
  description: z.string().optional(),
  load: z
    .looseObject({
      url: z.string(),
      rps: z.number().optional().describe('Total requests per second (num_clients defaults to 1)'),
      duration: z.string().optional(),
      timeout: z.string().optional(),
      method: z.string().optional(),
    })
    .optional(),
  proxies: z.array(z.string()).optional().describe("LOCAL=REMOTE#name mappings for the app's dependencies"),
  steady_state: z.array(z.string()).optional(),
  method: z
    .array(
      z.looseObject({
        name: z.string().optional(),
        at: z.string().optional(),
        for: z.string().optional(),
        via: z.string().optional(),
        fault: z
          .looseObject({ type: z.string(), target: z.string().optional() })
          .optional()
          .describe('A fault config as the proxies take it, camelCase or snake_case'),
      }),
    )
    .optional(),
  expect: z.array(z.string()).optional(),
  recover_within: z.string().optional(),
  abort_when: z.string().optional(),
});

const RUN: ToolAnnotationsExplicit = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

const expectation = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(['passed', 'failed', 'inconclusive', 'not_checked']),
  figure: z.string(),
  at_ms: z.number().nullable().describe('When it broke (failed) or was settled, ms from the start of the load'),
  reason: z.string(),
  window: z.string().nullable(),
});

export function registerExperimentTools(tools: ToolRegistry, ctx: ToolContext): void {
  registerRunExperimentTool(tools, ctx);
  registerSuggestExperimentTool(tools, ctx);
}

function registerRunExperimentTool(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_run_experiment',
      toolset: 'experiment',
      title: 'Run a chaos experiment',
      description:
        'Runs a chaos experiment on one timeline: baseline, faults set ' +
        'and cleared live (network and HTTP faults on proxies in front of ' +
        "the app's dependencies, " +
        'or through a running control plane; tool-call-plane and probe ' +
        'steps against MCP servers), then recovery; open-loop load ' +
        'measured throughout. ' +
        'Answers the markdown report (text) and a verdict per expectation ' +
        '— passed, failed with the figure and the moment, inconclusive ' +
        'with why — and overall. ' +
        "Every fault is cleared at its step's end, on abort and when the call is cancelled. " +
        'Programs it would start (expect and rollback commands, tool-call ' +
        "and probe servers) need the server owner's consent " +
        '(--allow-commands, --allow-command PROG) or, when the client ' +
        "supports elicitation, its person's; dry_run lists each and its " +
        'verdict. ' +
        'dry_run: validate and answer the plan without running anything. ' +
        'Sends progress; cancellable. Refused in production (NODE_ENV, ' +
        'ENVIRONMENT, APP_ENV … say prod) unless the server allows it.',
      input: {
        experiment: z.preprocess((value) => ({ [RAW]: value }), publishedExperiment).describe(EXPERIMENT_DESCRIPTION),
        dry_run: z.boolean().optional().describe('Only validate and describe what would run (default false)'),
      },
      output: {
        dry_run: z.boolean(),
        verdict: z.enum(['passed', 'failed', 'inconclusive', 'not_run']),
        verdict_reasons: z.array(z.string()),
        expectations: z.array(expectation),
        aborted: z.object({ at_ms: z.number(), rule: z.string(), figure: z.string() }).nullable(),
        faults: z.array(
          z.object({
            name: z.string(),
            type: z.string(),
            where: z.string(),
            on_ms: z.number().nullable(),
            off_ms: z.number().nullable(),
            acted: z.boolean().nullable(),
            detail: z.string(),
          }),
        ),
        load: z.looseObject({}).nullable().describe('requests, errors, latency stats (ms), achieved rate'),
        plan: z.looseObject({}).optional().describe('dry_run: the timeline it would run'),
      },
      annotations: RUN,
    },
    async (args, call) => {
      const source = (args.experiment as Record<string, unknown>)[RAW];
      const [{ experimentFrom }, { summarizePlan, renderPlan }] = await Promise.all([
        import('../experiment/load-file.js'),
        import('../experiment/describe.js'),
      ]);
      const limits = ctx.config.scenario;
      const policy = targetPolicyOf(ctx);
      const experiment = await experimentFrom({ experiment: source }, { limits, policy }, 'experiment');
      const programs = programsFor(ctx, call);
      if (args.dry_run) {
        const plan = summarizePlan(experiment, programs);
        return {
          text: renderPlan(plan),
          structured: {
            dry_run: true,
            verdict: 'not_run' as const,
            verdict_reasons: [],
            expectations: [],
            aborted: null,
            faults: [],
            load: null,
            plan: plan as unknown as Record<string, unknown>,
          },
        };
      }
      const { runExperiment, renderMarkdown } = await import('../experiment/index.js');
      const result = await runExperiment(experiment, {
        policy,
        programs,
        signal: call.signal,
        onProgress: (progress) => call.progress(progress.doneMs, progress.totalMs, progress.message),
      }).catch((error: unknown) => {
        throw call.signal.aborted ? new CancelledError() : error;
      });
      return { text: renderMarkdown(result), structured: structuredResult(result) };
    },
  );
}

/** What the server's configuration allows an experiment to reach, bind and run against. */
function targetPolicyOf(ctx: ToolContext) {
  const limits = ctx.config.scenario;
  return {
    allowRemoteTargets: limits.allowRemoteTargets,
    allowTargets: limits.allowTargets,
    allowNonLoopbackBind: limits.allowNonLoopbackBind,
    allowProduction: ctx.config.allowProduction,
    allowTokenEnv: limits.allowTokenEnv,
  };
}

/** A run's result under the tool's snake_case names. */
function structuredResult(result: ExperimentResult) {
  return {
    dry_run: false,
    verdict: result.verdict,
    verdict_reasons: result.verdictReasons,
    expectations: result.expectations.map((e) => ({
      id: e.id,
      title: e.title,
      status: e.status,
      figure: e.figure,
      at_ms: e.atMs,
      reason: e.reason,
      window: e.window ? e.window.label : null,
    })),
    aborted: result.aborted
      ? { at_ms: result.aborted.atMs, rule: result.aborted.rule, figure: result.aborted.figure }
      : null,
    faults: result.faults.map((f) => ({
      name: f.name,
      type: f.type,
      where: f.where,
      on_ms: f.onAtMs,
      off_ms: f.offAtMs,
      acted: f.acted,
      detail: f.actedDetail,
    })),
    load: result.load as unknown as Record<string, unknown> | null,
  };
}

function registerSuggestExperimentTool(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_suggest_experiment',
      toolset: 'experiment',
      title: 'Suggest a chaos experiment from code',
      description:
        "Reads an app's code with tree-sitter (Python, JavaScript, " +
        'TypeScript, Go, …) for its outbound dependencies — HTTP clients ' +
        '(httpx, requests, aiohttp, fetch, axios, Go net/http), ' +
        'Redis and database clients — and the environment variables ' +
        'holding their addresses, and answers a starter experiment (YAML) ' +
        'with one proxy mapping and a fitting fault per ' +
        'dependency, and the environment to point the app at the proxies. ' +
        'Give source_dir (the files the search index would take) or file. ' +
        'Reads only; runs nothing.',
      input: {
        source_dir: z
          .string()
          .optional()
          .describe(
            'Directory of the app (absolute, or a file:// URI); .gitignore and dependency directories are skipped',
          ),
        file: z.string().optional().describe('One source file instead of a directory'),
      },
      output: {
        dependencies: z.array(
          z.object({
            name: z.string(),
            kind: z.string().describe('http, redis, postgres, mysql, mongodb, amqp, kafka, memcached, grpc'),
            client: z.string(),
            env: z.string().nullable().describe('The environment variable holding its address'),
            address: z.string().nullable().describe('host:port found in the code (a default), if any'),
            evidence: z.array(z.string()).describe('file:line where it was seen'),
          }),
        ),
        experiment: z.string().describe('The starter experiment, YAML'),
        env: z.record(z.string(), z.string()).describe('Environment for the app so its calls go through the proxies'),
        notes: z.array(z.string()),
        files_read: z.number(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args, call) => {
      if ((args.source_dir === undefined || args.source_dir === '') === (args.file === undefined || args.file === ''))
        throw new InputError('source_dir or file: give exactly one');
      const { suggestFromSources } = await import('../experiment/suggest/index.js');
      const suggestion = await suggestFromSources(
        ctx.access,
        args.source_dir ? { sourceDir: args.source_dir } : { file: args.file! },
        call.signal,
      );
      return { text: suggestion.experiment, structured: suggestion as never };
    },
  );
}
