/**
 * `faultline run <fault> --url URL [flags]`: the fault_run_*_impact_scenario tools from the
 * shell. Flags are the tools' arguments with dashes (`--num-clients` for num_clients); the
 * markdown report goes to stdout (and --report FILE), every number to --json FILE (a run record of
 * kind scenario, which `faultline coverage` reads: scenario/run-record.ts). A live
 * progress line goes to stderr when it is a terminal.
 *
 * Exit codes: 0 the run passed its SLOs, 3 it ran but failed an SLO, 4 inconclusive (the fault
 * never touched the measured traffic, or the generator's lateness explains a failed latency SLO), 2 bad
 * arguments, 1 nothing accepts connections at the url (nothing is run) or any other failure — so a CI job can
 * gate on it and a run that tested nothing is never green.
 */
import { writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { renderReport } from '../report/markdown.js';
import { runScenario, scenarioFromArguments, type ScenarioArguments } from '../scenario/index.js';
import { checkWritable, runCommand, UsageError, withInterrupt } from './run-command.js';
import { anyCaseChoice, collect, integer, number, positiveInteger } from './parsers.js';
import { addScenarioLimitOptions, argumentFlags, type GlobalOptions, type ServerOptionValues } from './flags.js';
import { configFrom } from './flag-values.js';
import {
  addScenarioFlags,
  FAULT_COMMANDS,
  FAULT_FLAGS,
  flagOf,
  refuseOtherFaultFlags,
  scenarioArguments,
  type ScenarioFlagValues,
} from './scenario-flags.js';
import { addHttpArgumentFlags, HTTP_ARGUMENT_FLAGS, httpArgumentsOf } from './fault-flags.js';
import { HTTP_FAULT_TYPES } from '../proxy/vocabulary.js';

export const EXIT_SLO_FAILED = 3;
export const EXIT_INCONCLUSIVE = 4;

interface RunOptions extends ServerOptionValues, ScenarioFlagValues {
  expectStatus?: string;
  maxConnections?: number;
  proxy?: string[];
  baseline?: boolean;
  seed?: number;
  strategy?: string;
  insecureTls?: boolean;
  // http-error (each HTTP fault's own flags come from its declaration)
  httpFault?: string;
  probability?: number;
  report?: string;
  json?: string;
}

export function registerRunCommand(program: Command, globals: () => GlobalOptions): void {
  const command = program
    .command('run')
    .argument('<fault>', `the fault: ${Object.keys(FAULT_COMMANDS).join(', ')}, http-error`)
    .summary('run an impact scenario: a fault proxy plus open-loop load, then a markdown report')
    .description(
      'Drive open-loop load (num-clients × rps requests/s) at --url ' +
        'through a local fault proxy for --duration, and print ' +
        "fault's markdown report: run overview, latency percentiles, SLO " +
        'verdicts, errors by class, a per-second timeline, ' +
        'fault counters and, with --baseline, the impact against a ' +
        'no-fault run. Exit code 0 when the verdict is passed, 3 failed ' +
        '(an SLO failed), 4 inconclusive (the fault never touched the ' +
        'measured traffic, or the load generator ran behind enough to ' +
        'explain a latency SLO that failed), 1 when nothing accepts ' +
        'connections at --url (checked before the load: nothing is run).',
    );
  addScenarioFlags(command, 'endpoint to load (http:// or https://; loopback unless --allow-targets names it)')
    .addOption(
      new Option(
        '--expect-status <list>',
        'statuses that count as success: "200", "200-299,404", "2xx" (default "2xx,3xx"); others are errors',
      ),
    )
    .addOption(
      new Option(
        '--max-connections <n>',
        'most connections opened on demand when all are busy (default ' +
          'rate × timeout, at most 1000 and within the file-descriptor ' +
          'limit)',
      ).argParser(positiveInteger),
    )
    .addOption(
      new Option(
        '--proxy <mapping>',
        "LOCAL=REMOTE for the app's outbound calls, repeatable (default: the proxy sits in front of --url)",
      ).argParser(collect),
    )
    .option('--baseline', 'run the same load without the fault first and report the impact')
    .addOption(new Option('--seed <n>', "seed for the fault's random decisions").argParser(integer))
    .addOption(
      new Option(
        '--strategy <strategy>',
        'load (open loop, default) or capacity (closed loop: sustained req/s)',
      ).argParser(anyCaseChoice(['load', 'capacity'])),
    )
    .option('--insecure-tls', 'accept any certificate from an https --url')
    .addOption(
      new Option(
        '--http-fault <type>',
        `http-error: ${HTTP_FAULT_TYPES.map((type) => (type === 'error' ? 'error (default)' : type)).join(', ')}`,
      ),
    )
    .addOption(
      new Option('--probability <p>', 'http-error: chance 0..1 a request gets the fault (default 1)').argParser(number),
    );
  addHttpArgumentFlags(command)
    .option('--report <file>', 'also write the markdown report to FILE')
    .option(
      '--json <file>',
      'write every number of the run as JSON to FILE: a run record for ' +
        '`faultline coverage` (kind scenario; injected: the faults that ' +
        'really acted)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  faultline run latency --url http://127.0.0.1:8080/health --latency 200 --duration 30s --baseline\n' +
        '  faultline run blackhole --url http://127.0.0.1:8080/ --timeout 1 --fault-start 20% --fault-duration 5s\n' +
        '  faultline run bandwidth --url http://127.0.0.1:8080/big --rate 64 --unit kbps --json results.json\n' +
        '  faultline run latency --url http://127.0.0.1:8080/ --proxy ' +
        '34000=127.0.0.1:5432 --latency 50   # app → db calls',
    );
  addScenarioLimitOptions(command).action((fault: string, options: RunOptions) =>
    runCommand(() => runFromShell(fault, options, globals(), command)),
  );
}

/** The http-error scenario's own flags; giving one to a network fault is a mistake. */
const HTTP_FLAGS: readonly string[] = ['httpFault', 'probability', ...HTTP_ARGUMENT_FLAGS];

async function runFromShell(
  faultName: string,
  options: RunOptions,
  globals: GlobalOptions,
  command: Command,
): Promise<void> {
  const type = FAULT_COMMANDS[faultName];
  const isHttp = faultName === 'http-error';
  if (!type && !isHttp)
    throw new UsageError(
      `unknown fault '${faultName}'; accepted: ${[...Object.keys(FAULT_COMMANDS), 'http-error'].join(', ')}`,
    );
  const httpGiven = HTTP_FLAGS.find((key) => options[key] !== undefined);
  if (!isHttp && httpGiven) throw new UsageError(`${flagOf(httpGiven)} applies to 'http-error' scenarios`);
  refuseOtherFaultFlags(
    faultName,
    type ? FAULT_FLAGS[type] : HTTP_FLAGS,
    options as unknown as Record<string, unknown>,
  );
  const args: ScenarioArguments = {
    ...scenarioArguments(options),
    expect_status: options.expectStatus,
    max_connections: options.maxConnections,
    proxies: options.proxy,
    baseline: options.baseline,
    seed: options.seed,
    strategy: options.strategy,
    insecure_tls: options.insecureTls,
  };
  // Checked before the run, so a long run's results are not lost to a mistyped path.
  if (options.report) await checkWritable('--report', options.report);
  if (options.json) await checkWritable('--json', options.json);
  const config = configFrom(globals, options);
  const limits = config.scenario;
  // The scenario's refusals name this command's flags (--fault-start for fault_start).
  const spell = argumentFlags(command);
  const spec = isHttp
    ? await (await import('../scenario/http-fault.js')).httpScenarioFromArguments(
        {
          ...args,
          http_fault: options.httpFault,
          probability: options.probability,
          ...httpArgumentsOf(options as unknown as Record<string, unknown>),
        },
        limits,
        spell,
      )
    : await scenarioFromArguments(type!, args, limits, spell);
  const live = process.stderr.isTTY === true;
  const result = await withInterrupt((signal) =>
    runScenario(spec, {
      signal,
      allowProduction: config.allowProduction,
      onProgress: live
        ? (progress) =>
            process.stderr.write(
              `\r\x1b[2K${Math.round((progress.doneMs / progress.totalMs) * 100)}% ${progress.message}`,
            )
        : undefined,
    }),
  ).finally(() => {
    if (live) process.stderr.write('\r\x1b[2K');
  });
  const report = renderReport(result);
  process.stdout.write(`${report}\n`);
  if (options.report) await writeFile(options.report, `${report}\n`);
  if (options.json) {
    const { scenarioRunRecord } = await import('../scenario/run-record.js');
    await writeFile(options.json, `${JSON.stringify(scenarioRunRecord(result), null, 2)}\n`);
  }
  if (result.verdict === 'failed') process.exitCode = EXIT_SLO_FAILED;
  else if (result.verdict === 'inconclusive') process.exitCode = EXIT_INCONCLUSIVE;
}
