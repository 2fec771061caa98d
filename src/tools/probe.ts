/**
 * fault_probe_mcp_server (toolset family: probe): runs the fault-taxonomy probes against an MCP
 * server — spawned from command + args (stdio) or reached at url (streamable HTTP) — and answers
 * with the text report and every leaf and finding (structuredContent). The probe runner loads on
 * the first call.
 */
import * as z from 'zod';
import { InputError } from '../kernel/errors.js';
import { checkCommandLine } from '../command-line.js';
import type { ProbeReport, ProbeVerdict, Target } from '../probe/index.js';
import { FAMILY_IDS, type FamilyId } from '../probe/taxonomy.js';
import { PROBE_DEFAULTS, PROBE_LIMITS } from '../probe/limits.js';
import { LEAF_STATUSES } from '../kernel/run-record.js';
import type { ToolAnnotationsExplicit, ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';
import { programsFor } from './programs.js';

/** It runs the command it is given: not read-only, possibly destructive, open world. */
const PROBE_ANNOTATIONS: ToolAnnotationsExplicit = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

const STATUS = z.enum(LEAF_STATUSES);

/** What the tool answers (structuredContent): the verdict, the counts, every leaf and every finding. */
const PROBE_OUTPUT = {
  verdict: z.enum(['pass', 'fail', 'inconclusive', 'error']).describe('pass may carry warnings'),
  target: z.string(),
  passed: z.number(),
  failed: z.number(),
  warning: z.number(),
  not_applicable: z.number(),
  inconclusive: z.number(),
  untested: z.number().describe('Leaves that apply but were not exercised'),
  leaves: z.array(z.object({ id: z.string(), status: STATUS, checks: z.number(), note: z.string().optional() })),
  /** Failures first, then warnings; a finding of one kind lists every tool it was seen on. */
  findings: z.array(
    z.object({
      leaf: z.string(),
      severity: z.enum(['failure', 'warning']),
      tools: z.array(z.string()).optional(),
      message: z.string(),
      exchange: z.array(z.string()),
    }),
  ),
  error: z.string().optional(),
};

export function registerProbeTools(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_probe_mcp_server',
      toolset: 'probe',
      title: 'Probe an MCP server for runtime faults',
      description:
        'Runs fault-taxonomy probes against an MCP server: per leaf ' +
        'passed/failed/warning/inconclusive/untested/n/a, each finding a ' +
        'failure (MUST broken, crash, hang, security) or a warning ' +
        '(SHOULD, portability) with its JSON-RPC exchange. command (+ ' +
        'args) ' +
        "spawns a stdio server (with the server owner's consent: " +
        '--allow-commands, --allow-command, or elicitation); url is ' +
        'streamable HTTP (loopback unless the server allows the host). ' +
        'Calls only readOnlyHint ' +
        'tools unless allow_writes. Up to a minute.',
      input: {
        command: z.string().optional().describe('Executable of a stdio server to spawn, e.g. "node"'),
        args: z.array(z.string()).optional().describe('Arguments of command, e.g. ["server.js"]'),
        url: z.string().optional().describe('Streamable HTTP URL instead of command'),
        token: z.string().optional().describe('Bearer token for url'),
        cases: z
          .number()
          .int()
          .min(1)
          .max(PROBE_LIMITS.cases)
          .optional()
          .describe(`Hostile argument cases per tool (default ${PROBE_DEFAULTS.cases})`),
        seed: z.number().int().min(0).optional().describe(`Seed of the hostile cases (default ${PROBE_DEFAULTS.seed})`),
        families: z.array(z.enum(FAMILY_IDS)).optional().describe('Only these families (default all)'),
        allow_writes: z.boolean().optional().describe('Also call tools not annotated readOnlyHint (default false)'),
        call_timeout_ms: z
          .number()
          .int()
          .min(100)
          .max(PROBE_LIMITS.callTimeoutMs)
          .optional()
          .describe(`Bound per request in ms, restarted by progress (default ${PROBE_DEFAULTS.callTimeoutMs})`),
      },
      output: PROBE_OUTPUT,
      annotations: PROBE_ANNOTATIONS,
    },
    async (input, call) => {
      const { command, args, url, token } = input;
      if (command !== undefined && url !== undefined)
        throw new InputError('give either command (stdio) or url (HTTP), not both');
      if (command === undefined && url === undefined)
        throw new InputError('command: give command (+ args) to spawn a stdio server, or url for an HTTP one');
      if (command !== undefined && command.trim() === '') throw new InputError('command: must not be empty');
      if (args !== undefined && command === undefined) throw new InputError('args: applies to command only');
      if (token !== undefined && url === undefined) throw new InputError('token: applies to url only');
      const programs = programsFor(ctx, call);
      let target: Target;
      if (url !== undefined) {
        const { checkLoadTarget } = await import('../scenario/target.js');
        const checked = await checkLoadTarget(url, ctx.config.scenario, 'url');
        target = { kind: 'http', url: checked.href, ...(token ? { token } : {}) };
      } else {
        checkCommandLine(command!, args ?? []);
        target = { kind: 'stdio', command: command!, args: args ?? [] };
        await programs.approve(
          [{ argument: 'command', command: command!, args: args ?? [], why: 'the MCP server to probe' }],
          call.signal,
        );
      }
      const { targetLookup } = await import('../target-policy.js');
      const { loadTaxonomy, probeVerdict, renderProbeText, runProbe } = await import('../probe/index.js');
      const taxonomy = await loadTaxonomy();
      let step = 0;
      const report = await runProbe(target, taxonomy, {
        cases: input.cases ?? PROBE_DEFAULTS.cases,
        seed: input.seed ?? PROBE_DEFAULTS.seed,
        families: (input.families ?? []) as FamilyId[],
        allowWrites: input.allow_writes === true,
        allowProduction: ctx.config.allowProduction,
        callTimeoutMs: input.call_timeout_ms ?? PROBE_DEFAULTS.callTimeoutMs,
        overallTimeoutMs: PROBE_DEFAULTS.overallTimeoutMs,
        lookup: targetLookup(ctx.config.scenario),
        programs,
        signal: call.signal,
        onProgress: (message) => call.progress(++step, undefined, message),
      });
      // A command that cannot be spawned is a wrong argument, not a finding about a server.
      if (report.startError) throw new InputError(`command: could not start '${command}': ${report.startError}`);
      return {
        text: renderProbeText(report),
        structured: structuredOf(report, probeVerdict(report)),
      };
    },
  );
}

/** The report as the tool's structuredContent: snake_case counts, failures before warnings. */
function structuredOf(report: ProbeReport, verdict: ProbeVerdict): z.infer<z.ZodObject<typeof PROBE_OUTPUT>> {
  return {
    verdict,
    target: report.target,
    passed: report.summary.passed,
    failed: report.summary.failed,
    warning: report.summary.warning,
    not_applicable: report.summary.notApplicable,
    inconclusive: report.summary.inconclusive,
    untested: report.summary.untested,
    leaves: report.leaves.map((l) => ({
      id: l.id,
      status: l.status,
      checks: l.checks,
      ...(l.note ? { note: l.note } : {}),
    })),
    findings: report.leaves
      .flatMap((l) => l.findings)
      .sort((a, b) => Number(a.severity === 'warning') - Number(b.severity === 'warning'))
      .map((f) => ({
        leaf: f.leaf,
        severity: f.severity,
        ...((f.tools ?? f.tool) ? { tools: f.tools ?? [f.tool!] } : {}),
        message: f.message,
        exchange: f.exchange.map((x) => `${x.dir} ${x.text}`),
      })),
    ...(report.error ? { error: report.error } : {}),
  };
}
