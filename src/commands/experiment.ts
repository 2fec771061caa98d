/**
 * `faultline experiment run|validate|export|suggest|schema`: experiments as code from the shell.
 * The domain work is src/experiment's; this file reads flags and files and writes outputs.
 *
 * Exit codes of `run` are `faultline run`'s: 0 passed, 3 failed (an expectation failed, or an
 * abort rule fired), 4 inconclusive, 2 bad arguments or file, 1 any other failure, 130/143 when
 * interrupted (every fault is cleared first).
 */
import { ProgramPolicy } from '../consent/index.js';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { checkWritable, runCommand, UsageError, withInterrupt } from './run-command.js';
import { collect, parseListenAddress } from './parsers.js';
import { addScenarioLimitOptions, addTokenEnvOption, type GlobalOptions, type ServerOptionValues } from './flags.js';
import { configFrom } from './flag-values.js';
import { EXIT_INCONCLUSIVE, EXIT_SLO_FAILED } from './run.js';
import type { ControlPlane } from '../experiment/model.js';
import type { SafetyPolicy } from '../experiment/adapters/policy.js';

/** The largest experiment file read. */
const MAX_FILE_BYTES = 512 * 1024;

interface ContextFlags extends ServerOptionValues {
  proxy?: string[];
  /** run: the run's length when the file gives none (mcp-chaos-monkey's faults without durationMs). */
  duration?: string;
  /** run: the person's command after `--`, run with the faults on; the run lasts while it runs. */
  whileCommand?: string[];
  admin?: string;
  adminTokenEnv?: string;
  allowProduction?: boolean;
}

interface ExportFlags extends ContextFlags {
  to: 'chaos-mesh' | 'k6' | 'fis';
  out?: string;
  partial?: boolean;
  namespace?: string;
  selector?: string[];
  platform?: 'ecs' | 'eks';
  target?: string;
}

interface RunFlags extends ContextFlags {
  json?: string;
  junit?: string;
  html?: string;
  report?: string;
  quiet?: boolean;
  metrics?: string;
}

function addContextOptions(command: Command): Command {
  return addTokenEnvOption(addScenarioLimitOptions(command))
    .addOption(
      new Option('--proxy <mapping>', "add a proxy mapping LOCAL=REMOTE#name to the file's, repeatable").argParser(
        collect,
      ),
    )
    .option(
      '--admin <url>',
      'add a control plane named admin: a running `faultline proxy ' +
        "--admin` or an app's mcp-chaos-monkey admin endpoint",
    )
    .option('--admin-token-env <name>', "the variable holding --admin's token (default FAULTLINE_ADMIN_TOKEN)");
}

export function registerExperimentCommand(program: Command, globals: () => GlobalOptions): void {
  const experiment = program
    .command('experiment')
    .summary('run, check and export experiments as code (hypothesis, faults on a timeline, expectations, verdict)')
    .description(
      'An experiment file (YAML or JSON, `faultline experiment schema` ' +
        'prints its JSON Schema) states the steady state, the faults on a ' +
        'timeline (network, ' +
        'HTTP, tool-call plane, probes), what must hold while they act, ' +
        'how soon the system recovers and when to abort. ' +
        "mcp-chaos-monkey's scenario JSON is read as it is.",
    );

  const run = experiment
    .command('run')
    .argument('<file>', 'the experiment (YAML or JSON)')
    .argument(
      '[command...]',
      'after --: your command (e.g. -- npm test), run with the faults on; the run lasts while it runs ' +
        'and its exit code is an expectation',
    )
    .summary('run an experiment and print its report; exit 0 passed, 3 failed, 4 inconclusive')
    .description(
      'Runs the experiment: baseline, then the faults set and cleared ' +
        'live on the proxies and control planes, then recovery, on one ' +
        'timeline. Prints the markdown ' +
        'report; --json writes the run record (kind experiment, counted ' +
        'by `faultline coverage`), --junit JUnit XML, --html a ' +
        'single-file page with the charts. ' +
        "Every fault is cleared at its step's end, when an abort rule fires and on Ctrl-C.",
    )
    .option('--json <file>', 'write the run record (every figure and verdict) to FILE')
    .option('--junit <file>', 'write JUnit XML (one test case per expectation) to FILE')
    .option('--html <file>', 'write the single-file HTML report to FILE')
    .option('--report <file>', 'also write the markdown report to FILE')
    .option(
      '--metrics <address>',
      'serve GET /metrics (Prometheus text format) on PORT or HOST:PORT ' +
        'while the run goes; behind the token in --admin-token-env when ' +
        'set',
    )
    .option(
      '--duration <duration>',
      "the run's length when the file gives none: how long " +
        "mcp-chaos-monkey's faults without durationMs are held (e.g. 30s)",
    )
    .addHelpText(
      'after',
      '\nExamples:\n  faultline experiment run ' +
        'examples/experiment/weather.yaml --html report.html --junit ' +
        'junit.xml\n  faultline experiment run monkey-scenario.json ' +
        '--admin http://127.0.0.1:9900',
    );
  addContextOptions(run).action((file: string, command: string[], flags: RunFlags, self: Command) =>
    runCommand(() => runFromShell(file, { ...flags, ...whileCommandOf(command, self) }, globals())),
  );

  const validate = experiment
    .command('validate')
    .argument('<file>', 'the experiment (YAML or JSON)')
    .summary('check an experiment against the schema and the rules, print what it would do')
    .description(
      "Validates the file (its JSON Schema, then every field's meaning: " +
        'faults, mappings, SLOs, windows) and prints the timeline it ' +
        'would run. Nothing is started. Exit 0 valid, 2 not.',
    );
  addContextOptions(validate).action((file: string, flags: ContextFlags) =>
    runCommand(async () => {
      const { experiment } = await loadFile(file, flags, globals());
      const { summarizePlan, renderPlan } = await import('../experiment/describe.js');
      process.stdout.write(renderPlan(summarizePlan(experiment)));
    }),
  );

  const exportCommand = experiment
    .command('export')
    .argument('<file>', 'the experiment (YAML or JSON)')
    .summary('write an experiment for Chaos Mesh, k6 or AWS FIS (nothing is run)')
    .description(
      'chaos-mesh: a Workflow (each fault step a NetworkChaos or ' +
        'HTTPChaos after a Suspend, side by side; HTTP checks as ' +
        "StatusCheck nodes, abort_when's aborting the workflow). " +
        'k6: the load with a threshold per expectation window and HTTP ' +
        'checks that abort the test. fis: a template whose actions are ' +
        'sequenced by startAfter, with a stop condition. ' +
        'What the engine cannot express with the same meaning is refused ' +
        'with the reason (exit 2); --partial writes the rest and lists ' +
        'what was left out. The document goes to stdout (or --out), notes ' +
        'to stderr.',
    )
    .addOption(
      new Option('--to <engine>', 'chaos-mesh, k6 or fis').choices(['chaos-mesh', 'k6', 'fis']).makeOptionMandatory(),
    )
    .option('--out <file>', 'write the document to FILE instead of stdout')
    .option('--partial', 'write what the engine can express and list the parts left out, instead of refusing')
    .option('--namespace <ns>', 'chaos-mesh: namespace of the pods (default "default")')
    .addOption(
      new Option(
        '--selector <name:key=value>',
        "chaos-mesh: a label selecting a mapping's pods (NAME is its #name; * for every mapping), repeatable",
      ).argParser(collect),
    )
    .addOption(new Option('--platform <platform>', 'fis: ecs (default) or eks network actions').choices(['ecs', 'eks']))
    .option(
      '--target <json>',
      'fis: target_config JSON {roleArn, stopConditionArn, mappings: ' +
        '{<name>: {tags | resourceArns | parameters}}, …}; placeholders ' +
        'fill what is missing',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  faultline experiment export --to chaos-mesh ' +
        'weather.yaml --selector weather:app=weather --namespace shop\n  ' +
        'faultline experiment export --to k6 weather.yaml --partial --out ' +
        'load.js',
    );
  addContextOptions(exportCommand).action((file: string, flags: ExportFlags) =>
    runCommand(() => exportFromShell(file, flags, globals())),
  );

  experiment
    .command('suggest')
    .argument('<path>', "the app's source directory, or one source file")
    .summary("propose a starter experiment from the code's outbound dependencies")
    .description(
      'Reads the code with tree-sitter for its HTTP, Redis, database ' +
        'and broker clients and the environment variables holding their ' +
        'addresses, and prints a ' +
        'starter experiment (YAML): one proxy mapping and a fitting fault ' +
        'per dependency, and in its header the variables that point the ' +
        'app at the proxies. Runs nothing.',
    )
    .option('--out <file>', 'write the experiment to FILE instead of stdout')
    .action((path: string, flags: { out?: string }) =>
      runCommand(async () => {
        if (flags.out) await checkWritable('--out', flags.out);
        const [{ FileAccess }, { suggestFromSources }] = await Promise.all([
          import('../access.js'),
          import('../experiment/suggest/index.js'),
        ]);
        const absolute = resolve(path);
        const info = await stat(absolute).catch(() => undefined);
        if (!info) throw new UsageError(`${path}: no such file or directory`);
        const suggestion = await suggestFromSources(
          new FileAccess([]),
          info.isDirectory() ? { sourceDir: absolute } : { file: absolute },
        );
        for (const note of suggestion.notes) process.stderr.write(`note: ${note}\n`);
        if (flags.out) await writeFile(flags.out, suggestion.experiment);
        else process.stdout.write(suggestion.experiment);
      }),
    );

  experiment
    .command('schema')
    .summary("print the experiment file's JSON Schema")
    .description(
      'Prints the JSON Schema experiment files are validated against ' +
        '(the same as schemas/experiment.schema.json), for editors: in ' +
        'YAML, `# yaml-language-server: $schema=<path to it>`.',
    )
    .action(() =>
      runCommand(async () => {
        const { EXPERIMENT_SCHEMA } = await import('../experiment/schema.js');
        process.stdout.write(`${JSON.stringify(EXPERIMENT_SCHEMA, null, 2)}\n`);
      }),
    );
}

async function readExperimentFile(file: string): Promise<string> {
  const info = await stat(file).catch(() => undefined);
  if (!info) throw new UsageError(`${file}: no such file`);
  if (!info.isFile()) throw new UsageError(`${file}: not a file`);
  if (info.size > MAX_FILE_BYTES)
    throw new UsageError(`${file}: ${info.size} bytes, above the ${MAX_FILE_BYTES} an experiment may have`);
  return readFile(file, 'utf8');
}

function policyFrom(
  flags: ContextFlags,
  globals: GlobalOptions,
): { policy: SafetyPolicy; limits: ReturnType<typeof configFrom>['scenario'] } {
  const config = configFrom(globals, flags);
  const limits = config.scenario;
  return {
    limits,
    policy: {
      allowRemoteTargets: limits.allowRemoteTargets,
      allowTargets: limits.allowTargets,
      allowNonLoopbackBind: limits.allowNonLoopbackBind,
      allowProduction: config.allowProduction,
      allowTokenEnv: limits.allowTokenEnv,
    },
  };
}

async function loadFile(file: string, flags: ContextFlags, globals: GlobalOptions, forExport = false) {
  const text = await readExperimentFile(file);
  const local = policyFrom(flags, globals);
  // An export dials nothing: any host, and the engines' own lengths.
  const { policy, limits } = forExport
    ? {
        policy: { ...local.policy, allowRemoteTargets: true },
        limits: {
          ...local.limits,
          allowRemoteTargets: true,
          maxDurationMs: 12 * 3_600_000,
          maxRatePerSecond: 1_000_000,
        },
      }
    : local;
  const extraControl: ControlPlane[] = flags.admin
    ? [{ name: 'admin', url: flags.admin, tokenEnv: flags.adminTokenEnv ?? 'FAULTLINE_ADMIN_TOKEN' }]
    : [];
  const { experimentFrom } = await import('../experiment/load-file.js');
  const { parseDuration } = await import('../duration.js');
  const durationMs = flags.duration === undefined ? undefined : parseDuration(flags.duration, '--duration');
  const experiment = await experimentFrom(
    { experiment: text, baseDir: dirname(resolve(file)) },
    {
      limits,
      policy,
      ...(flags.proxy ? { extraProxies: flags.proxy } : {}),
      ...(extraControl.length ? { extraControl } : {}),
      ...(durationMs !== undefined ? { durationMs } : {}),
      ...(flags.whileCommand ? { whileCommand: flags.whileCommand } : {}),
    },
    file,
  );
  return { experiment, policy };
}

/** The command after `--` (never operands without it: a stray word is not a program to start). */
function whileCommandOf(command: string[], self: Command): { whileCommand?: string[] } {
  if (command.length === 0) return {};
  let root: Command = self;
  while (root.parent) root = root.parent;
  const raw = (root as unknown as { rawArgs?: string[] }).rawArgs ?? [];
  if (!raw.includes('--'))
    throw new UsageError(
      `run: unexpected ${JSON.stringify(command[0])}: a command to run with the faults on goes after --, ` +
        'e.g. faultline experiment run scenario.json -- npm test',
    );
  return { whileCommand: command };
}

async function runFromShell(file: string, flags: RunFlags, globals: GlobalOptions): Promise<void> {
  // Checked before the run, so a long run's results are not lost to a mistyped path.
  for (const [flag, path] of [
    ['--json', flags.json],
    ['--junit', flags.junit],
    ['--html', flags.html],
    ['--report', flags.report],
  ] as const)
    if (path) await checkWritable(flag, path);
  const { experiment, policy } = await loadFile(file, flags, globals);
  const { runExperiment, renderMarkdown, renderJunit, renderHtml, experimentRunRecord } = await import(
    '../experiment/index.js'
  );
  const live = process.stderr.isTTY === true;
  const metrics = flags.metrics ? await startRunMetrics(flags, policy) : undefined;
  const result = await withInterrupt((signal) =>
    runExperiment(experiment, {
      policy,
      // A person at their own shell: every command of their file runs, with their environment.
      programs: ProgramPolicy.owner(),
      signal,
      ...(metrics ? { metrics: metrics.metrics } : {}),
      // Said before the load starts, on a terminal or not: the run would not be worth its length.
      onNotice: (message) => process.stderr.write(`${live ? '\r\x1b[2K' : ''}note: ${message}\n`),
      // The command after `--` is watched as it runs, on stderr: stdout carries the report.
      onCommandOutput: (chunk) => process.stderr.write(live ? Buffer.concat([Buffer.from('\r\x1b[2K'), chunk]) : chunk),
      onProgress: live
        ? (progress) =>
            process.stderr.write(
              `\r\x1b[2K${Math.round((progress.doneMs / progress.totalMs) * 100)}% ${progress.message}`,
            )
        : undefined,
    }),
  ).finally(async () => {
    if (live) process.stderr.write('\r\x1b[2K');
    await metrics?.server.close();
  });
  const report = renderMarkdown(result);
  process.stdout.write(report);
  if (flags.report) await writeFile(flags.report, report);
  if (flags.json) await writeFile(flags.json, `${JSON.stringify(experimentRunRecord(result), null, 2)}\n`);
  if (flags.junit) await writeFile(flags.junit, renderJunit(result));
  if (flags.html) await writeFile(flags.html, renderHtml(result));
  if (result.verdict === 'failed') process.exitCode = EXIT_SLO_FAILED;
  else if (result.verdict === 'inconclusive') process.exitCode = EXIT_INCONCLUSIVE;
}

/** --metrics: the run's metrics on a listener of their own (the runner has no control API). */
async function startRunMetrics(flags: RunFlags, policy: SafetyPolicy) {
  const { ExperimentMetrics, startMetricsServer } = await import('../metrics/index.js');
  const tokenEnv = flags.adminTokenEnv ?? 'FAULTLINE_ADMIN_TOKEN';
  const token = process.env[tokenEnv]?.trim() || undefined;
  const { host, port } = parseListenAddress(flags.metrics!, '--metrics');
  const metrics = new ExperimentMetrics();
  const server = await startMetricsServer({
    host,
    port,
    token,
    registry: metrics.registry,
    bind: {
      argument: `--metrics ${flags.metrics}`,
      what: 'the metrics endpoint',
      allowNonLoopbackBind: policy.allowNonLoopbackBind === true,
    },
  });
  process.stderr.write(`metrics on ${server.url}${token ? ` (Bearer token from ${tokenEnv})` : ''}\n`);
  return { metrics, server };
}

async function exportFromShell(file: string, flags: ExportFlags, globals: GlobalOptions): Promise<void> {
  if (flags.out) await checkWritable('--out', flags.out);
  const selectors: Record<string, string[]> = {};
  for (const entry of flags.selector ?? []) {
    const match = /^([^:=]+):(.+=.*)$/.exec(entry.trim());
    if (!match)
      throw new UsageError(`--selector ${entry}: write NAME:key=value (NAME a mapping's #name, or * for all)`);
    (selectors[match[1]!.replace(/^#/, '')] ??= []).push(match[2]!);
  }
  const { experiment } = await loadFile(file, flags, globals, true);
  const [{ exportExperiment }, { jsonArgument }] = await Promise.all([
    import('../experiment/export/index.js'),
    import('../cloud/json-argument.js'),
  ]);
  const result = await exportExperiment(experiment, flags.to, {
    ...(flags.partial ? { partial: true } : {}),
    ...(flags.namespace ? { namespace: flags.namespace } : {}),
    ...(Object.keys(selectors).length ? { selectors } : {}),
    ...(flags.platform ? { platform: flags.platform } : {}),
    ...(flags.target !== undefined
      ? { targetConfig: jsonArgument(flags.target, '--target') as Record<string, unknown> }
      : {}),
  });
  for (const note of result.notes) process.stderr.write(`note: ${note}\n`);
  if (flags.out) await writeFile(flags.out, result.document);
  else process.stdout.write(result.document);
}
