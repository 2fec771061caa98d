/**
 * The scenario flags `faultline run` and `faultline export` share, defined once: the request and
 * load (--url … --slo), the fault window and placement (--fault-start, --direction, --side) and
 * each network fault's own flags, with the defaults the scenario applies (scenario/defaults.ts)
 * and the same parsers (choices in any case, numbers checked). `scenarioArguments` turns the
 * parsed flags into the tools' arguments; `refuseOtherFaultFlags` refuses a flag of another fault.
 *
 * Only leaf modules are imported: `faultline export` loads this before it knows it will run.
 */
import { Option, type Command } from 'commander';
import type { ScenarioArguments } from '../scenario/input.js';
import { SCENARIO_DEFAULTS as D } from '../scenario/defaults.js';
import { commandOf } from '../proxy/faults/declaration.js';
import { NETWORK_FAULTS, type NetworkFaultType } from '../proxy/faults/declarations.js';
import { UsageError } from './run-command.js';
import { anyCaseChoice, collect, number, positiveInteger } from './parsers.js';
import { addFaultFlags, attributeOf, fieldFlags, flagsByFault, flagValue } from './fault-flags.js';

/** The fault as the commands spell it (`packet-loss`) → the scenario's fault type. */
export const FAULT_COMMANDS: Readonly<Record<string, NetworkFaultType>> = Object.fromEntries(
  NETWORK_FAULTS.map((fault) => [commandOf(fault), fault.type]),
);

/** The shared flags as commander names them; each fault's own (`deviation` …) come from its declaration. */
export interface ScenarioFlagValues {
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
  [faultFlag: string]: unknown;
}

/** Each network fault's own flags (option keys); giving one of another fault's is a mistake, not a default. */
export const FAULT_FLAGS = Object.fromEntries(
  [...flagsByFault('run')].map(([type, flags]) => [type, flags.map((flag) => attributeOf(flag.shown))]),
) as unknown as Readonly<Record<NetworkFaultType, readonly string[]>>;
/** The same with the proxy's spellings (`latencyDeviation`), which `run` takes as aliases. */
const FAULT_FLAG_ALIASES = Object.fromEntries(
  [...flagsByFault('run')].map(([type, flags]) => [
    type,
    flags.flatMap((flag) => [flag.shown, ...(flag.hidden ? [flag.hidden] : [])]).map(attributeOf),
  ]),
) as unknown as Readonly<Record<NetworkFaultType, readonly string[]>>;

/** `--num-clients` for `numClients`. */
export function flagOf(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Adds the shared flags; `url` describes --url for this command. */
export function addScenarioFlags(command: Command, url: string): Command {
  command
    .requiredOption('--url <url>', url)
    .option('--method <method>', `HTTP method (default ${D.method})`)
    .option('--body <json>', 'request body, sent as application/json')
    .addOption(new Option('--header <line>', '"Name: value", repeatable').argParser(collect))
    .option('--duration <duration>', `how long the load runs: 500ms, 10s, 1m30s (default ${D.duration})`)
    .addOption(
      new Option(
        '--num-clients <n>',
        `keep-alive connections (default ${D.num_clients}); the rate is num-clients × rps`,
      ).argParser(positiveInteger),
    )
    .addOption(new Option('--rps <n>', `requests per second per client (default ${D.rps})`).argParser(number))
    .addOption(
      new Option(
        '--timeout <seconds>',
        `per-request timeout, from the request's intended start (default ${D.timeout})`,
      ).argParser(number),
    )
    .addOption(
      new Option(
        '--slo <slo>',
        'an SLO such as "99% @ 350ms", "p95 < 200ms", "errors < 1%", ' +
          'repeatable (default: fault\'s two plus "errors < 1%")',
      ).argParser(collect),
    )
    .option('--fault-start <when>', 'when the fault starts: a duration or % of --duration (default 0)')
    .option('--fault-duration <how-long>', 'how long the fault lasts: a duration or % (default to the end)')
    .addOption(
      new Option(
        '--direction <direction>',
        `ingress, egress or both (default ${D.direction}; blackhole: both)`,
      ).argParser(anyCaseChoice(['ingress', 'egress', 'both'])),
    )
    .addOption(
      new Option('--side <side>', `server (proxy↔target) or client (client↔proxy) (default ${D.side})`).argParser(
        anyCaseChoice(['server', 'client']),
      ),
    );
  return addFaultFlags(command, 'run');
}

/** The shared flags as the scenario tools' arguments. */
export function scenarioArguments(flags: ScenarioFlagValues): ScenarioArguments {
  return {
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
    ...faultArguments(flags),
  };
}

/** Each fault field's flag value (either spelling) under fault's argument name. */
function faultArguments(flags: ScenarioFlagValues): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const flag of fieldFlags('run')) {
    const value = flagValue(flags, flag);
    if (value !== undefined && flag.field.argument) args[flag.field.argument.name] = value;
  }
  return args;
}

/**
 * Refuses a flag of another network fault (`--loss-rate` on a latency run): `fault` as the user
 * typed it, `own` the flags it takes (option keys).
 */
export function refuseOtherFaultFlags(fault: string, own: readonly string[], flags: Record<string, unknown>): void {
  const type = FAULT_COMMANDS[fault];
  for (const [other, keys] of Object.entries(FAULT_FLAG_ALIASES)) {
    if (other === type) continue;
    const given = keys.find((key) => flags[key] !== undefined && !own.includes(key));
    if (given) {
      const spelled = Object.keys(FAULT_COMMANDS).find((name) => FAULT_COMMANDS[name] === other) ?? other;
      throw new UsageError(
        `${flagOf(given)} applies to '${spelled}' scenarios; '${fault}' ` +
          `takes ${own.map(flagOf).join(', ') || 'none of its own'}`,
      );
    }
  }
}
