/**
 * `faultline probe -- CMD ARGS…` (stdio) or `faultline probe --url URL [--token T]` (streamable
 * HTTP): runs the taxonomy's probes against any MCP server. The text report goes to stdout, every
 * finding (the run record coverage reads) to --json FILE. --url goes through the target policy
 * (src/target-policy.ts), as every other outbound connection does: checked before anything is
 * sent, and again at every connect after name resolution.
 *
 * Exit codes: 0 no failure (warnings allowed), 1 a failure (or the server could not be probed),
 * 2 bad arguments or a target the policy refuses.
 */
import { ProgramPolicy } from '../consent/index.js';
import { writeFile } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { checkWritable, runCommand, UsageError, withInterrupt } from './run-command.js';
import { collect, positiveInteger, httpUrl } from './parsers.js';
import { addTargetOptions, type GlobalOptions, type TargetOptionValues } from './flags.js';
import { targetAllowanceFrom } from './flag-values.js';
import type { FamilyId } from '../probe/taxonomy.js';

const FAMILIES = ['PROTO', 'TOOL', 'SCHEMA', 'STATE', 'PROVIDER', 'SECURITY', 'TIMEOUT', 'CONFIG'];

interface ProbeCommandOptions extends TargetOptionValues {
  url?: string;
  token?: string;
  cases?: number;
  seed?: number;
  family?: string[];
  allowWrites?: boolean;
  allowProduction?: boolean;
  callTimeout?: number;
  timeout?: number;
  json?: string;
  registry?: string;
  quiet?: boolean;
}

function family(value: string, previous: string[] | undefined): string[] {
  const id = value.trim().toUpperCase();
  if (!FAMILIES.includes(id)) throw new InvalidArgumentError(`accepted: ${FAMILIES.join(', ')}`);
  return collect(id, previous);
}

function nonNegativeInteger(value: string): number {
  return value.trim() === '0' ? 0 : positiveInteger(value);
}

export function registerProbeCommand(program: Command, _globals: () => GlobalOptions): void {
  const probeCommand = program
    .command('probe')
    .summary('probe an MCP server for runtime faults, per taxonomy leaf')
    .description(
      'Runs the fault-taxonomy probes (PROTO, TOOL, SCHEMA, STATE, ' +
        'PROVIDER, SECURITY, TIMEOUT, CONFIG) against an MCP ' +
        'server spawned from CMD ARGS (stdio) or reached at --url ' +
        '(streamable HTTP), and reports per leaf passed / failed / ' +
        'n/a / inconclusive / untested, each finding a failure (a MUST ' +
        'broken, a crash, a hang, a security check) or a warning ' +
        '(a SHOULD, a portability risk), with the JSON-RPC exchange that ' +
        'shows it. Only tools annotated readOnlyHint are ' +
        'called unless --allow-writes. --url must be loopback unless --allow-targets names it; link-local and ' +
        'metadata addresses never. Exit 1 on a failure; warnings alone exit 0.',
    )
    .argument('[command...]', 'the stdio server to spawn, after --')
    .addOption(new Option('--url <url>', 'probe a streamable HTTP server at this URL instead').argParser(httpUrl))
    .addOption(
      new Option('--token <token>', 'bearer token for --url (also checks that requests without it are refused)').env(
        'FAULTLINE_PROBE_TOKEN',
      ),
    )
    .addOption(
      new Option('--cases <n>', 'hostile argument cases per tool (TOOL family), at most 100')
        .argParser(positiveInteger)
        .default(8),
    )
    .addOption(
      new Option('--seed <n>', 'seed of the hostile cases (same seed, same cases)')
        .argParser(nonNegativeInteger)
        .default(1),
    )
    .addOption(
      new Option('--family <id>', `run only this family's probes (repeatable): ${FAMILIES.join(', ')}`).argParser(
        family,
      ),
    )
    .addOption(new Option('--allow-writes', 'also call tools not annotated readOnlyHint (they may change things)'))
    .addOption(
      new Option(
        '--allow-production',
        'with --allow-writes: probe even where the environment says production (env FAULTLINE_ALLOW_PRODUCTION=1)',
      ),
    )
    .addOption(
      new Option(
        '--call-timeout <ms>',
        'bound on each request to the server, in milliseconds; a tool ' +
          'call that sends progress gets it again after each notification, ' +
          'up to --timeout',
      )
        .argParser(positiveInteger)
        .default(5000),
    )
    .addOption(
      new Option(
        '--timeout <ms>',
        'bound on the whole run, stopping the server included, in ' +
          'milliseconds: at the bound requests in flight are abandoned, the ' +
          'server (and what it started) is stopped within 0.25 s more, and ' +
          'the leaves not probed yet are reported untested',
      )
        .argParser(positiveInteger)
        .default(120_000),
    )
    .addOption(new Option('--json <file>', 'write the report (a run record for `faultline coverage`) as JSON to FILE'))
    .addOption(new Option('--registry <file>', 'use this taxonomy JSON instead of the shipped one'))
    .addOption(new Option('--quiet', 'print the findings without their exchanges'))
    .addHelpText(
      'after',
      `
Examples:
  faultline probe -- node server.js                    probe a stdio server
  faultline probe --family PROTO --family TOOL -- npx my-mcp-server
  faultline probe --url http://127.0.0.1:8808/mcp --token "$T" --json probe.json`,
    );
  addTargetOptions(probeCommand).action((command: string[], options: ProbeCommandOptions) =>
    runCommand(async () => {
      const { runProbe, loadTaxonomy, renderProbeText, PROBE_LIMITS } = await import('../probe/index.js');
      if (options.url && command.length > 0) throw new UsageError('give either --url or a command after --, not both');
      if (!options.url && command.length === 0)
        throw new UsageError('give the server to probe: a command after -- (stdio) or --url URL');
      if (options.token && !options.url) throw new UsageError('--token applies to --url only');
      const targets = targetAllowanceFrom(options);
      if ((options.allowRemoteTargets || options.allowTargets?.length) && !options.url)
        throw new UsageError('--allow-targets and --allow-remote-targets apply to --url only');
      if ((options.cases ?? 8) > PROBE_LIMITS.cases) throw new UsageError(`--cases: at most ${PROBE_LIMITS.cases}`);
      if ((options.callTimeout ?? 0) > PROBE_LIMITS.callTimeoutMs)
        throw new UsageError(`--call-timeout: at most ${PROBE_LIMITS.callTimeoutMs} ms`);
      if ((options.timeout ?? 0) > PROBE_LIMITS.overallTimeoutMs)
        throw new UsageError(`--timeout: at most ${PROBE_LIMITS.overallTimeoutMs} ms`);
      if (options.json) await checkWritable('--json', options.json);
      const taxonomy = await loadTaxonomy(options.registry);
      let target: import('../probe/index.js').Target;
      if (options.url) {
        const { checkLoadTarget } = await import('../scenario/target.js');
        const url = await checkLoadTarget(options.url, targets, '--url');
        target = { kind: 'http', url: url.href, ...(options.token ? { token: options.token } : {}) };
      } else target = { kind: 'stdio', command: command[0]!, args: command.slice(1) };
      const { targetLookup } = await import('../target-policy.js');
      const report = await withInterrupt((signal) =>
        runProbe(target, taxonomy, {
          cases: options.cases ?? 8,
          seed: options.seed ?? 1,
          families: (options.family ?? []) as FamilyId[],
          allowWrites: options.allowWrites === true,
          allowProduction: options.allowProduction === true,
          programs: ProgramPolicy.owner(),
          callTimeoutMs: options.callTimeout ?? 5000,
          overallTimeoutMs: options.timeout ?? 120_000,
          lookup: targetLookup(targets),
          signal,
          onProgress: (message) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${message.slice(0, 100)}`),
        }),
      );
      if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
      if (options.json) await writeFile(options.json, JSON.stringify(report, null, 2) + '\n');
      process.stdout.write(renderProbeText(report, options.quiet !== true));
      // Failures decide; warnings are reported, not fatal.
      if (report.error || report.summary.failed > 0) process.exitCode = 1;
    }),
  );
}
