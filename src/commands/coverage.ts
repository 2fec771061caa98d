/**
 * `faultline coverage [SUITE]`: which fault families the runs of a suite exercised, from their run
 * records (src/probe/record.ts), and which exercised leaves failed. `--no-suite --probe NAME…`
 * scores the named probes against the taxonomy instead (as mcptest's fault-coverage does);
 * `--no-suite` alone prints the taxonomy.
 *
 * Exit codes: 0 done (and the threshold met), 6 below --threshold (in every mode), 2 bad arguments.
 */
import { Option, InvalidArgumentError, type Command } from 'commander';
import { runCommand, UsageError } from './run-command.js';
import { collect } from './parsers.js';
import { type GlobalOptions } from './flags.js';

export const EXIT_BELOW_THRESHOLD = 6;

interface CoverageOptions {
  probe?: string[];
  threshold?: number;
  format: 'text' | 'json' | 'md' | 'junit' | 'sarif';
  suite?: boolean;
  registry?: string;
}

function percent(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100)
    throw new InvalidArgumentError('expected a percentage 0-100');
  return n;
}

export function registerCoverageCommand(program: Command, _globals: () => GlobalOptions): void {
  program
    .command('coverage')
    .summary("report which fault families a suite's runs exercised")
    .description(
      'Reads a suite file (YAML: version, agents, runs of kind ' +
        'probe|toolcall|network|scenario|experiment, each with its run ' +
        'record) ' +
        'and reports per fault family covered / partial / uncovered / ' +
        'n/a, per leaf which run exercised it and which failed, and ' +
        'the percentage of applicable leaves exercised. Computed from the ' +
        'run records of what actually ran, which these ' +
        'commands write: `faultline probe --json FILE` (kind probe: each ' +
        'leaf and its outcome), `faultline toolcall proxy ' +
        'stdio|http --json FILE` (kind toolcall: the faults it injected), ' +
        '`faultline run FAULT --json FILE` (kind scenario: ' +
        'the faults that acted) and `faultline proxy --json FILE` (kind ' +
        'network) and `faultline experiment run --json FILE` (kind ' +
        'experiment). ' +
        'Without a suite, --no-suite --probe NAME scores the named probes ' +
        '(the probe names of `coverage --no-suite`, or an ' +
        "alias such as mcptest's fuzz) against the taxonomy; --no-suite " +
        'alone prints the taxonomy. --threshold gates every mode.',
    )
    .argument('[suite]', 'the suite YAML file')
    .addOption(
      new Option(
        '--probe <name>',
        'with a suite: count only this run of it; with --no-suite: score this probe (repeatable)',
      ).argParser(collect as never),
    )
    .addOption(
      new Option(
        '--threshold <pct>',
        'exit 6 when the percentage of applicable faults exercised is below this (0-100), in every mode',
      ).argParser(percent),
    )
    .addOption(
      new Option('--format <format>', 'output format')
        .choices(['text', 'json', 'md', 'junit', 'sarif'])
        .default('text'),
    )
    .addOption(new Option('--no-suite', 'print the taxonomy (families, leaves, fault mappings) instead'))
    .addOption(new Option('--registry <file>', 'use this taxonomy JSON instead of the shipped one'))
    .addHelpText(
      'after',
      `
Examples:
  faultline probe --json runs/probe.json -- node server.js
  faultline toolcall proxy stdio --plan plan.yaml --json runs/plan.json -- node server.js
  faultline run latency --url http://127.0.0.1:8080/ --json runs/latency.json
  faultline coverage faultline-suite.yaml --threshold 60 --format md
  faultline coverage --no-suite --probe fuzz --probe proto-ping --threshold 20
  faultline coverage --no-suite`,
    )
    .action((suiteFile: string | undefined, options: CoverageOptions) =>
      runCommand(async () => {
        const { loadTaxonomy, loadSuite, computeCoverage, scoreProbes, renderCoverage, renderTaxonomy, thresholdMet } =
          await import('../probe/index.js');
        const taxonomy = await loadTaxonomy(options.registry);
        let report: import('../probe/index.js').CoverageReport;
        if (options.suite === false) {
          if (suiteFile) throw new UsageError('--no-suite takes no SUITE file');
          if (options.probe === undefined && options.threshold === undefined) {
            process.stdout.write(
              options.format === 'json' ? JSON.stringify(taxonomy, null, 2) + '\n' : renderTaxonomy(taxonomy),
            );
            return;
          }
          // No probe named and a threshold: nothing is exercised, which the threshold judges too.
          report = scoreProbes(taxonomy, options.probe ?? []);
        } else {
          if (!suiteFile)
            throw new UsageError(
              'give a SUITE file (or --no-suite --probe NAME to score probes, or --no-suite to print the taxonomy)',
            );
          const suite = await loadSuite(suiteFile);
          report = await computeCoverage(suite, taxonomy, options.probe ?? [], suite.name ?? suiteFile);
        }
        process.stdout.write(renderCoverage(report, options.format, options.threshold));
        if (thresholdMet(report, options.threshold) === false) process.exitCode = EXIT_BELOW_THRESHOLD;
      }),
    );
}
