/**
 * `faultline export --to fis|chaos-mesh|k6 FAULT [scenario flags]`: the fault_export_scenario tool
 * from the shell. FAULT and the scenario flags are `faultline run`'s (scenario-flags.ts: one
 * definition for both); the document goes to stdout (or --out FILE) and the notes to stderr. What
 * the engine cannot do is refused (exit 2) with the reason, naming the flags as typed here. Heavy
 * modules (the scenario validation, the cloud module, yaml) load only when the command runs.
 */
import { writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { runCommand, UsageError } from './run-command.js';
import { anyCaseChoice, collect } from './parsers.js';
import { argumentFlags, type GlobalOptions } from './flags.js';
import {
  addScenarioFlags,
  FAULT_COMMANDS,
  FAULT_FLAGS,
  refuseOtherFaultFlags,
  scenarioArguments,
  type ScenarioFlagValues,
} from './scenario-flags.js';
import { EXPORT_TARGETS, FIS_PLATFORMS } from '../cloud/export-targets.js';

interface ExportFlags extends ScenarioFlagValues {
  to: (typeof EXPORT_TARGETS)[number];
  platform?: (typeof FIS_PLATFORMS)[number];
  target?: string;
  namespace?: string;
  selector?: string[];
  out?: string;
}

export function registerExportCommand(program: Command, _globals: () => GlobalOptions): void {
  const command = program
    .command('export')
    .argument('<fault>', `the scenario's fault: ${Object.keys(FAULT_COMMANDS).join(', ')}`)
    .summary('write a scenario for AWS FIS, Chaos Mesh or k6 (nothing is run)')
    .description(
      'Write one faultline scenario (the same flags and defaults as ' +
        '`faultline run`) for an engine beyond one machine: ' +
        'fis — a CreateExperimentTemplate with the ECS or EKS network action; chaos-mesh — a NetworkChaos manifest; ' +
        'k6 — a script with a constant-arrival-rate scenario (num-clients × rps) and thresholds from the SLOs. ' +
        'Only what the engine cannot do is refused, with the reason; a ' +
        "setting left at its default takes the engine's meaning, and a " +
        'note says so.',
    )
    .addOption(
      new Option('--to <engine>', EXPORT_TARGETS.join(', '))
        .argParser(anyCaseChoice(EXPORT_TARGETS))
        .makeOptionMandatory(),
    );
  addScenarioFlags(command, 'the service endpoint (any host: nothing is loaded)')
    .addOption(
      new Option('--platform <platform>', 'fis: ecs (default) or eks network actions').argParser(
        anyCaseChoice(FIS_PLATFORMS),
      ),
    )
    .option(
      '--target <json>',
      'fis: target_config JSON {roleArn, stopConditionArn, tags | ' +
        'resourceArns, kubernetesServiceAccount, …}; placeholders fill ' +
        'what is missing',
    )
    .option('--namespace <ns>', 'chaos-mesh: namespace of the pods (default "default")')
    .addOption(new Option('--selector <key=value>', 'chaos-mesh: pod label, repeatable').argParser(collect))
    .option('--out <file>', 'write the document to FILE instead of stdout')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  faultline export --to k6 latency --url ' +
        'https://checkout.internal/api --num-clients 20 --rps 5 ' +
        '--duration 5m --slo "99% @ 500ms"\n' +
        '  faultline export --to chaos-mesh latency --url ' +
        'http://checkout:8080/ --latency 200 --deviation 20 --selector ' +
        'app=checkout\n' +
        '  faultline export --to fis packet-loss --url ' +
        'http://checkout:8080/ --loss-rate 0.07 --duration 10m --target ' +
        '\'{"roleArn":"…","stopConditionArn":"…","tags":{"service":"checkout"}}\'',
    )
    .action((fault: string, flags: ExportFlags) =>
      runCommand(async () => {
        const type = FAULT_COMMANDS[fault];
        if (!type)
          throw new UsageError(`unknown fault '${fault}'; accepted: ${Object.keys(FAULT_COMMANDS).join(', ')}`);
        refuseOtherFaultFlags(fault, FAULT_FLAGS[type], flags as unknown as Record<string, unknown>);
        const [{ exportScenario, EXPORT_LIMITS, jsonArgument }, { scenarioFromArguments }] = await Promise.all([
          import('../cloud/index.js'),
          import('../scenario/index.js'),
        ]);
        const spell = argumentFlags(command);
        const spec = await scenarioFromArguments(type, scenarioArguments(flags), EXPORT_LIMITS, spell);
        const result = await exportScenario(spec, flags.to, {
          ...(flags.platform ? { platform: flags.platform } : {}),
          ...(flags.target !== undefined
            ? { targetConfig: jsonArgument(flags.target, '--target') as Record<string, unknown> }
            : {}),
          ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
          ...(flags.selector !== undefined ? { selector: flags.selector } : {}),
          spell,
        });
        for (const note of result.notes) process.stderr.write(`note: ${note}\n`);
        const document = result.document.endsWith('\n') ? result.document : `${result.document}\n`;
        if (flags.out) await writeFile(flags.out, document);
        else process.stdout.write(document);
      }),
    );
}
