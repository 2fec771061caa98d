/**
 * `faultline export --to fis|chaos-mesh|k6 FAULT [scenario flags]`: the fault_export_scenario tool
 * from the shell. FAULT and the scenario flags are `faultline run`'s (a subset: what an export
 * carries); the document goes to stdout (or --out FILE) and the notes to stderr. A fault or a
 * setting the engine cannot express exactly is refused (exit 2) with the reason. Heavy modules
 * (the scenario validation, the cloud module, yaml) load only when the command runs.
 */
import { writeFile } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { collect, positiveInteger, runCommand, UsageError, withFlagNames, type GlobalOptions } from './common.js';

const FAULTS: Record<string, string> = {
  latency: 'latency',
  jitter: 'jitter',
  'packet-loss': 'packet_loss',
  bandwidth: 'bandwidth',
  blackhole: 'blackhole',
};

interface ExportFlags {
  to: 'fis' | 'chaos-mesh' | 'k6';
  url: string;
  method?: string;
  body?: string;
  header?: string[];
  duration?: string;
  numClients?: number;
  rps?: number;
  timeout?: number;
  slo?: string[];
  faultStart?: string;
  faultDuration?: string;
  direction?: string;
  side?: string;
  latency?: number;
  deviation?: number;
  distribution?: string;
  lossRate?: number;
  model?: string;
  rate?: number;
  unit?: string;
  bandwidthScope?: string;
  platform?: 'ecs' | 'eks';
  target?: string;
  namespace?: string;
  selector?: string[];
  out?: string;
}

function number(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a number');
  return n;
}

export function registerExportCommand(program: Command, _globals: () => GlobalOptions): void {
  const command = program
    .command('export')
    .argument('<fault>', `the scenario's fault: ${Object.keys(FAULTS).join(', ')}`)
    .summary('write a scenario for AWS FIS, Chaos Mesh or k6 (nothing is run)')
    .description(
      'Write one faultline scenario (the same flags and defaults as `faultline run`) for an engine beyond one machine: ' +
        'fis — a CreateExperimentTemplate with the ECS or EKS network action; chaos-mesh — a NetworkChaos manifest; ' +
        'k6 — a script with a constant-arrival-rate scenario (num-clients × rps) and thresholds from the SLOs. ' +
        'A fault or setting with no exact equivalent on the engine is refused with the reason.',
    )
    .addOption(new Option('--to <engine>', 'fis, chaos-mesh or k6').choices(['fis', 'chaos-mesh', 'k6']).makeOptionMandatory())
    .requiredOption('--url <url>', 'the service endpoint (any host: nothing is loaded)')
    .option('--method <method>', 'HTTP method (default GET)')
    .option('--body <json>', 'request body, sent as application/json')
    .addOption(new Option('--header <line>', '"Name: value", repeatable').argParser(collect))
    .option('--duration <duration>', 'load length: 30s, 5m (default 10s; FIS actions need at least 1m)')
    .addOption(new Option('--num-clients <n>', 'connections (default 10); the rate is num-clients × rps').argParser(positiveInteger))
    .addOption(new Option('--rps <n>', 'requests per second per client (default 2)').argParser(number))
    .addOption(new Option('--timeout <seconds>', 'per-request timeout (default 10)').argParser(number))
    .addOption(new Option('--slo <slo>', 'an SLO such as "99% @ 350ms" or "errors < 1%", repeatable (default fault\'s two and errors < 1%)').argParser(collect))
    .option('--fault-start <when>', 'when the fault starts: a duration or % of --duration (default 0)')
    .option('--fault-duration <how-long>', 'how long the fault lasts: a duration or % (default to the end)')
    .addOption(new Option('--direction <direction>', 'ingress (default), egress or both').choices(['ingress', 'egress', 'both']))
    .addOption(new Option('--side <side>', 'server (default) or client').choices(['server', 'client']))
    .addOption(new Option('--latency <ms>', 'latency: delay in ms (default 100)').argParser(number))
    .addOption(new Option('--deviation <ms>', 'latency: spread in ms (default 0)').argParser(number))
    .addOption(new Option('--distribution <name>', 'latency: normal (default) or uniform — exports need uniform when --deviation > 0').choices(['normal', 'uniform', 'pareto', 'pareto_normal']))
    .addOption(new Option('--loss-rate <fraction>', 'packet-loss: fraction lost, 0..1 (default 0.05)').argParser(number))
    .addOption(new Option('--model <model>', 'packet-loss: bernoulli (default) or gilbert_elliott').choices(['bernoulli', 'gilbert_elliott']))
    .addOption(new Option('--rate <n>', 'bandwidth: cap in --unit (default 1000)').argParser(number))
    .option('--unit <unit>', 'bandwidth: bps, kbps, mbps, gbps (bytes/s) or bit/s, kbit/s, mbit/s, gbit/s (default bps)')
    .addOption(new Option('--bandwidth-scope <scope>', 'bandwidth: connection (default) or shared — chaos-mesh needs shared').choices(['connection', 'shared']))
    .addOption(new Option('--platform <platform>', 'fis: ecs (default) or eks network actions').choices(['ecs', 'eks']))
    .option('--target <json>', 'fis: target_config JSON {roleArn, stopConditionArn, tags | resourceArns, kubernetesServiceAccount, …}; placeholders fill what is missing')
    .option('--namespace <ns>', 'chaos-mesh: namespace of the pods (default "default")')
    .addOption(new Option('--selector <key=value>', 'chaos-mesh: pod label, repeatable').argParser(collect))
    .option('--out <file>', 'write the document to FILE instead of stdout')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  faultline export --to k6 latency --url https://checkout.internal/api --num-clients 20 --rps 5 --duration 5m --slo "99% @ 500ms"\n' +
        '  faultline export --to chaos-mesh latency --url http://checkout:8080/ --latency 200 --deviation 20 --distribution uniform --selector app=checkout\n' +
        '  faultline export --to fis packet-loss --url http://checkout:8080/ --loss-rate 0.07 --duration 10m --target \'{"roleArn":"…","stopConditionArn":"…","tags":{"service":"checkout"}}\'',
    )
    .action((fault: string, flags: ExportFlags) =>
      runCommand(async () => {
        const type = FAULTS[fault];
        if (!type) throw new UsageError(`unknown fault '${fault}'; accepted: ${Object.keys(FAULTS).join(', ')}`);
        const [{ exportScenario, checkFaultArguments, EXPORT_LIMITS, jsonArgument }, { scenarioFromArguments }] = await Promise.all([import('../cloud/index.js'), import('../scenario/index.js')]);
        const args = {
          url: flags.url,
          method: flags.method,
          body: flags.body,
          headers: flags.header,
          duration: flags.duration,
          num_clients: flags.numClients,
          rps: flags.rps,
          timeout: flags.timeout,
          slos: flags.slo,
          fault_start: flags.faultStart,
          fault_duration: flags.faultDuration,
          direction: flags.direction,
          side: flags.side,
          latency: flags.latency,
          deviation: flags.deviation,
          distribution: flags.distribution,
          loss_rate: flags.lossRate,
          model: flags.model,
          rate: flags.rate,
          unit: flags.unit,
          bandwidth_scope: flags.bandwidthScope,
        };
        checkFaultArguments(type, args, (name) => `--${name.replace(/_/g, '-')}`);
        const spec = await withFlagNames(command, () => scenarioFromArguments(type as never, args, EXPORT_LIMITS));
        const result = await exportScenario(spec, flags.to, {
          ...(flags.platform ? { platform: flags.platform } : {}),
          ...(flags.target !== undefined ? { targetConfig: jsonArgument(flags.target, '--target') as Record<string, unknown> } : {}),
          ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
          ...(flags.selector !== undefined ? { selector: flags.selector } : {}),
        });
        for (const note of result.notes) process.stderr.write(`note: ${note}\n`);
        const document = result.document.endsWith('\n') ? result.document : `${result.document}\n`;
        if (flags.out) await writeFile(flags.out, document);
        else process.stdout.write(document);
      }),
    );
}
