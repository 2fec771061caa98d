/**
 * `faultline fis recommend --finding JSON|TEXT [--json]` and
 * `faultline fis template --recommendation JSON --target JSON [--format json|cloudformation] [--yaml]`:
 * the fault_recommend_fis_experiments and fault_create_fis_template tools from the shell. Offline;
 * nothing calls AWS. The cloud module is imported when a subcommand runs, not at start-up.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { runCommand, UsageError } from './run-command.js';
import { collect } from './parsers.js';
import { type GlobalOptions } from './flags.js';

export function registerFisCommand(program: Command, _globals: () => GlobalOptions): void {
  const fis = program
    .command('fis')
    .summary('AWS FIS: recommend experiments for a finding, build validated experiment templates (offline)');
  fis.description(
    'AWS Fault Injection Service experiments, offline: ' +
      'recommendations from a finding, and templates checked against ' +
      'the FIS action catalog.',
  );

  fis
    .command('recommend')
    .summary('rank FIS experiments for a finding')
    .description(
      'Rank FIS actions for a finding (plain text, or JSON {id, ' +
        'summary, type, description}): why each matched, a confidence, ' +
        'duration, parameters, target resource type, stop condition and ' +
        'the local faultline scenario that rehearses it. ' +
        "Prints a readable list, or with --json the tool's JSON {recommendations, finding_id, count}.",
    )
    .requiredOption('--finding <json-or-text>', 'the finding: plain text or JSON text (at most 10 KB)')
    .addOption(
      new Option(
        '--resource <arn-or-type>',
        'an ARN or resource type (aws:rds:db) the finding concerns, repeatable',
      ).argParser(collect),
    )
    .addOption(
      new Option('--limit <n>', 'most recommendations, 1–20 (default 5)').argParser((value) => {
        const n = Number(value);
        if (!/^\d+$/.test(value) || n < 1 || n > 20) throw new InvalidArgumentError('expected a whole number 1–20');
        return n;
      }),
    )
    .option('--json', 'print JSON instead of the readable list')
    .addHelpText(
      'after',
      '\nExamples:\n  faultline fis recommend --finding "database ' +
        'connection failures at peak during the Aurora failover"\n  ' +
        'faultline fis recommend --finding \'{"id":"f-1","summary":"p99 ' +
        'latency between ECS services"}\' --json',
    )
    .action((options: { finding: string; resource?: string[]; limit?: number; json?: boolean }) =>
      runCommand(async () => {
        const { recommendExperiments } = await import('../cloud/index.js');
        const set = recommendExperiments(options.finding, {
          resources: options.resource ?? [],
          limit: options.limit ?? 5,
        });
        if (options.json) {
          process.stdout.write(`${JSON.stringify(set, null, 2)}\n`);
          return;
        }
        const header = set.notes.map((note) => `Note: ${note}.\n`).join('');
        if (set.count === 0) {
          process.stdout.write(header);
          return;
        }
        const lines = set.recommendations.map((r, i) =>
          [
            `${i + 1}. ${r.action}  (confidence ${r.confidence})`,
            `   ${r.failure}`,
            `   why: ${r.why.join('; ')}`,
            `   target: ` +
              `${r.targetResourceType ?? 'none'}${r.targetKey ? ` as ${r.targetKey}` : ''}; ` +
              `duration: ${r.duration ?? 'none'}; parameters: ${JSON.stringify(r.parameters)}` +
              (r.parametersToSet.length ? `; set: ${r.parametersToSet.join(', ')}` : ''),
            `   stop condition: ${r.stopCondition.suggestion}`,
            r.localRehearsal
              ? `   rehearse locally: ${r.localRehearsal.tool} ${JSON.stringify(r.localRehearsal.arguments)}`
              : '   rehearse locally: no faultline scenario reproduces this',
          ].join('\n'),
        );
        process.stdout.write(`${header}${header ? '\n' : ''}${lines.join('\n\n')}\n`);
      }),
    );

  fis
    .command('template')
    .summary('build a validated FIS CreateExperimentTemplate input (or CloudFormation)')
    .description(
      'Build a complete FIS experiment template from a recommendation ' +
        '({action, parameters?, duration?}, or what `fis recommend ' +
        '--json` ' +
        'prints; an array for several actions) and a target configuration ' +
        '({roleArn, stopConditionArn, tags | resourceArns, ' +
        'selectionMode?, …}). ' +
        'Every field is checked against the FIS action catalog; a wrong ' +
        'one is named on stderr (exit 2). Never calls AWS.',
    )
    .requiredOption('--recommendation <json>', 'JSON: {action, parameters?, duration?} or an array of them')
    .requiredOption(
      '--target <json>',
      'JSON: {roleArn, stopConditionArn | noStopCondition: true, tags | resourceArns | parameters, selectionMode?, …}',
    )
    .addOption(
      new Option(
        '--format <format>',
        'json: the API input (default); cloudformation: an AWS::FIS::ExperimentTemplate resource',
      ).choices(['json', 'cloudformation']),
    )
    .option('--yaml', 'with --format cloudformation: YAML instead of JSON')
    .addHelpText(
      'after',
      '\nExample:\n  faultline fis template --recommendation ' +
        '\'{"action":"aws:ecs:task-network-latency","duration":"PT5M","parameters":{"delayMilliseconds":"200"}}\' ' +
        '\\\n' +
        '    --target ' +
        '\'{"roleArn":"arn:aws:iam::123456789012:role/fis","stopConditionArn":"arn:aws:cloudwatch:us-east-1:123456789012:alarm:p99","tags":{"service":"checkout"}}\' ' +
        '--format cloudformation --yaml',
    )
    .action((options: { recommendation: string; target: string; format?: 'json' | 'cloudformation'; yaml?: boolean }) =>
      runCommand(async () => {
        const { buildExperimentTemplate, renderCloudFormation, jsonArgument } = await import('../cloud/index.js');
        if (options.yaml && options.format !== 'cloudformation')
          throw new UsageError('--yaml applies to --format cloudformation only');
        const built = buildExperimentTemplate(
          jsonArgument(options.recommendation, 'recommendation', true),
          jsonArgument(options.target, 'target_config'),
        );
        for (const warning of built.warnings) process.stderr.write(`warning: ${warning}\n`);
        const document =
          options.format === 'cloudformation'
            ? await renderCloudFormation(built.template, options.yaml ? 'yaml' : 'json')
            : JSON.stringify(built.template, null, 2);
        process.stdout.write(document.endsWith('\n') ? document : `${document}\n`);
      }),
    );
}
