/**
 * `faultline coverage [SUITE]`: which fault families the runs of a suite exercised, from their run
 * records (see src/probe/record.ts and README). `--no-suite` prints the taxonomy.
 *
 * Exit codes: 0 done (and the threshold met), 6 below --threshold, 2 bad arguments.
 */
import { Option, InvalidArgumentError, type Command } from 'commander';
import { collect, runCommand, UsageError, type GlobalOptions } from './common.js';

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
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100) throw new InvalidArgumentError('expected a percentage 0-100');
  return n;
}

export function registerCoverageCommand(program: Command, _globals: () => GlobalOptions): void {
  program
    .command('coverage')
    .summary('report which fault families a suite\'s runs exercised')
    .description(
      'Reads a suite file (YAML: version, agents, runs of kind probe|toolcall|network|scenario|experiment, each with its run record) ' +
        'and reports per fault family covered / partial / uncovered / n/a, per leaf which run exercised it, and the percentage ' +
        'of applicable leaves exercised. Computed from the run records of what actually ran: `faultline probe --json FILE` ' +
        'writes one (kind probe), so does `faultline toolcall proxy stdio|http --json FILE` (kind toolcall: the faults it ' +
        'injected), `faultline run --json` and `faultline experiment run --json` (kinds scenario and experiment); one written by other tooling in the same format counts too. ' +
        '--no-suite prints the taxonomy.',
    )
    .argument('[suite]', 'the suite YAML file')
    .addOption(new Option('--probe <name>', 'count only this run of the suite (repeatable)').argParser(collect as never))
    .addOption(new Option('--threshold <pct>', 'exit 6 when the percentage is below this (0-100)').argParser(percent))
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json', 'md', 'junit', 'sarif']).default('text'))
    .addOption(new Option('--no-suite', 'print the taxonomy (families, leaves, fault mappings) instead'))
    .addOption(new Option('--registry <file>', 'use this taxonomy JSON instead of the shipped one'))
    .addHelpText(
      'after',
      `
Examples:
  faultline probe --json runs/probe.json -- node server.js
  faultline toolcall proxy stdio --plan plan.yaml --json runs/plan.json -- node server.js
  faultline coverage faultline-suite.yaml --threshold 60 --format md
  faultline coverage --no-suite`,
    )
    .action((suiteFile: string | undefined, options: CoverageOptions) =>
      runCommand(async () => {
        const { loadTaxonomy, loadSuite, computeCoverage, renderCoverage, renderTaxonomy } = await import('../probe/index.js');
        const taxonomy = await loadTaxonomy(options.registry);
        if (options.suite === false) {
          if (suiteFile) throw new UsageError('--no-suite takes no SUITE file');
          process.stdout.write(options.format === 'json' ? JSON.stringify(taxonomy, null, 2) + '\n' : renderTaxonomy(taxonomy));
          return;
        }
        if (!suiteFile) throw new UsageError('give a SUITE file (or --no-suite to print the taxonomy)');
        const suite = await loadSuite(suiteFile);
        const report = await computeCoverage(suite, taxonomy, options.probe ?? [], suite.name ?? suiteFile);
        process.stdout.write(renderCoverage(report, options.format, options.threshold));
        if (options.threshold !== undefined && report.percent < options.threshold) process.exitCode = EXIT_BELOW_THRESHOLD;
      }),
    );
}
