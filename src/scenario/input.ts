/**
 * From the arguments an agent or a person gives (fault's argument names, snake_case, strings for
 * durations) to a validated ScenarioSpec. One function serves the five MCP tools and the
 * `faultline run` command, so both accept and refuse exactly the same things. Every refusal is a
 * InputError that names the argument as the caller wrote it and says what is accepted.
 */
import { asGiven, InputError, type Spell } from '../kernel/errors.js';
import { parseDuration, DURATION_FORMS } from '../duration.js';
import type { ScenarioLimits } from '../config.js';
// From the proxy's leaf modules, not its index: this runs on the caller's thread, where the proxy itself never
// runs (proxy-host/), so it loads what checks a spec and not the proxy.
import { validateFault, type FaultSpec, type FaultType } from '../proxy/faults/index.js';
import { parseBandwidth } from '../proxy/faults/bandwidth.js';
import type { Direction, Side } from '../proxy/faults/fault.js';
import { parseMapping, type Mapping } from '../proxy/mapping.js';
import {
  DEFAULT_EXPECTED_STATUS,
  DEFAULT_MAX_CONNECTIONS,
  MAX_CONNECTIONS,
  openFileLimit,
  parseExpectedStatus,
  RESERVED_FDS,
  type ExpectedStatus,
} from '../load/index.js';
import type { HttpFaultSpec } from '../proxy/http/index.js';
import { DEFAULT_SLOS, parseSlo, type Slo } from './slo.js';
import { checkLoadTarget } from './target.js';
import { checkMappings, type TargetAllowance } from '../target-policy.js';
import { FAULT_ARGUMENT_DEFAULTS, SCENARIO_DEFAULTS } from './defaults.js';
import type { FieldDeclaration } from '../proxy/faults/declaration.js';
import { NETWORK_FAULTS } from '../proxy/faults/declarations.js';

export { SCENARIO_DEFAULTS };

/** The arguments of the fault_run_* tools (every one optional but `url`). */
export interface ScenarioArguments {
  url: string;
  method?: string | undefined;
  body?: string | undefined;
  headers?: string[] | undefined;
  duration?: string | undefined;
  num_clients?: number | undefined;
  rps?: number | undefined;
  /** Seconds. */
  timeout?: number | undefined;
  /** Statuses that count as success, e.g. "2xx,3xx" (default), "200", "200-299,404". */
  expect_status?: string | undefined;
  /** The most keep-alive connections the load may open when every open one is busy. */
  max_connections?: number | undefined;
  proxies?: string[] | undefined;
  direction?: string | undefined;
  side?: string | undefined;
  slos?: string[] | undefined;
  baseline?: boolean | undefined;
  seed?: number | undefined;
  fault_start?: string | undefined;
  fault_duration?: string | undefined;
  strategy?: string | undefined;
  insecure_tls?: boolean | undefined;
  /** Each network fault's own arguments (`latency`, `loss_rate` …): its declaration's (src/proxy/faults). */
  [faultArgument: string]: unknown;
}

export type Strategy = 'load' | 'capacity';

export interface ScenarioSpec {
  url: string;
  method: string;
  body: string;
  headers: Record<string, string>;
  durationMs: number;
  clients: number;
  /** Per client, as fault means it: the total rate is clients × rps. */
  rps: number;
  timeoutMs: number;
  /** Connections opened on demand, up to this many (at least `clients`). */
  maxConnections: number;
  /** Statuses that count as success; the text as given (normalised) and parsed. */
  expectStatus: string;
  expectedStatus: ExpectedStatus;
  /** --max-rate: a closed-loop capacity run is held to it too. */
  maxRatePerSecond: number;
  /** Empty: an ephemeral proxy in front of `url`. Otherwise the app's outbound calls go through these. */
  proxies: Mapping[];
  /**
   * The fault as built from the arguments, already checked with validateFault. It is kept
   * unresolved because the proxy validates what it is given again, and a resolved packet-loss
   * spec (p and r filled in for bernoulli) is not valid input to it.
   */
  fault: FaultSpec;
  /** When the fault is active, from the start of the load (ms); the rest of the run has no fault. */
  faultStartMs: number;
  faultEndMs: number;
  slos: Slo[];
  baseline: boolean;
  seed: number | undefined;
  strategy: Strategy;
  rejectUnauthorized: boolean;
  /** What the load and the proxy may dial (the server's target policy), checked again at every connect. */
  targets: TargetAllowance;
  /**
   * An HTTP fault (scenario/http-fault.ts), checked but kept as given, like `fault`: when set, it
   * is the scenario's fault and `fault` is unused.
   */
  httpFault?: HttpFaultSpec;
}

/** `spell` names each argument in a refusal as the caller spells it (the CLI's `--fault-start`). */
export async function scenarioFromArguments(
  type: FaultType,
  args: ScenarioArguments,
  limits: ScenarioLimits,
  spell: Spell = asGiven,
): Promise<ScenarioSpec> {
  const url = await checkLoadTarget(args.url, limits, spell('url'));
  if (url.port === '0')
    throw new InputError(
      `${spell('url')}: port 0 is not a port a server listens on; give the endpoint's port (e.g. http://127.0.0.1:8080/)`,
    );
  const method = (args.method ?? SCENARIO_DEFAULTS.method).trim().toUpperCase();
  if (!/^[A-Z][A-Z0-9_-]*$/.test(method))
    throw new InputError(`${spell('method')}: "${args.method}" is not an HTTP method (GET, POST, PUT, DELETE, …)`);

  const durationMs = parseDuration(args.duration ?? SCENARIO_DEFAULTS.duration, spell('duration'));
  if (durationMs <= 0)
    throw new InputError(`${spell('duration')}: must be above 0; write one such as ${DURATION_FORMS}`);
  if (durationMs > limits.maxDurationMs) {
    throw new InputError(
      `${spell('duration')}: ${args.duration} is longer than the ${limits.maxDurationMs / 1000} ` +
        `s this server allows (raise it with --max-duration)`,
    );
  }
  const clients = positiveInteger(args.num_clients ?? SCENARIO_DEFAULTS.num_clients, spell('num_clients'));
  const rps = positiveNumber(args.rps ?? SCENARIO_DEFAULTS.rps, spell('rps'));
  if (clients * rps > limits.maxRatePerSecond) {
    throw new InputError(
      `${spell('num_clients')} × ${spell('rps')} = ${clients * rps} requests/s is above the ${limits.maxRatePerSecond} ` +
        `this server allows (raise it with --max-rate)`,
    );
  }
  const timeoutSeconds = positiveNumber(args.timeout ?? SCENARIO_DEFAULTS.timeout, spell('timeout'));
  if (timeoutSeconds > 600) throw new InputError(`${spell('timeout')}: at most 600 seconds`);
  const expectStatus = (args.expect_status ?? DEFAULT_EXPECTED_STATUS).trim();
  const expectedStatus = parseExpectedStatus(expectStatus, spell('expect_status'));

  const proxies = (args.proxies ?? []).map((text, index) => {
    try {
      return parseMapping(text);
    } catch (error) {
      throw new InputError(`${spell('proxies')}[${index}]: ${(error as Error).message}`);
    }
  });
  checkMappings(proxies, limits, spell('proxies'));

  const maxConnections = connectionBudget(args, clients, clients * rps, timeoutSeconds, proxies.length === 0, spell);
  const fault = buildFault(type, args, spell);
  const { startMs, endMs } = faultWindow(args, durationMs, spell);
  const slos = (args.slos && args.slos.length > 0 ? args.slos : DEFAULT_SLOS).map((text, index) =>
    parseSlo(text, `${spell('slos')}[${index}]`),
  );
  const strategy = choice(args.strategy ?? 'load', ['load', 'capacity'], spell('strategy')) as Strategy;
  if (args.seed !== undefined && !(Number.isSafeInteger(args.seed) && args.seed >= 0))
    throw new InputError(`${spell('seed')}: must be a whole number ≥ 0 (got ${args.seed})`);
  const scheduled = (clients * rps * durationMs) / 1000;
  if (strategy === 'load' && scheduled < 1) {
    // The first request is due at 0 s, so it would be sent anyway, and the achieved rate over so
    // short a run would read far above the target (1 request in 100 ms: "achieved 10 req/s").
    throw new InputError(
      `${spell('duration')} × ${spell('num_clients')} × ${spell('rps')} schedules ${Number(scheduled.toPrecision(3))} ` +
        `requests, less than one; lengthen the duration or raise rps`,
    );
  }

  return {
    url: url.href,
    method,
    body: args.body ?? '',
    headers: parseHeaders(args.headers ?? [], spell),
    durationMs,
    clients,
    rps,
    timeoutMs: timeoutSeconds * 1000,
    maxConnections,
    expectStatus,
    expectedStatus,
    maxRatePerSecond: limits.maxRatePerSecond,
    proxies,
    fault,
    faultStartMs: startMs,
    faultEndMs: endMs,
    slos,
    baseline: args.baseline ?? false,
    seed: args.seed,
    strategy,
    rejectUnauthorized: !(args.insecure_tls ?? false),
    targets: { allowRemoteTargets: limits.allowRemoteTargets, allowTargets: [...(limits.allowTargets ?? [])] },
  };
}

function buildFault(type: FaultType, args: ScenarioArguments, spell: Spell): FaultSpec {
  const target = {
    side: choice(args.side ?? SCENARIO_DEFAULTS.side, ['server', 'client'], spell('side')) as Side,
    direction: choice(
      // A blackhole drops both ways unless told otherwise (src/proxy/faults/blackhole.ts).
      args.direction ?? (type === 'blackhole' ? 'both' : SCENARIO_DEFAULTS.direction),
      ['ingress', 'egress', 'both'],
      spell('direction'),
    ) as Direction,
  };
  const spec: Record<string, unknown> = { type, ...target };
  // fault's argument names for the spec's fields, so errors name the argument given.
  const argumentOf: Record<string, string> = {};
  const declaration = NETWORK_FAULTS.find((fault) => fault.type === type);
  for (const field of (declaration?.fields ?? []) as readonly FieldDeclaration[]) {
    const argument = field.argument;
    if (!argument || field.argumentOnly) continue;
    argumentOf[field.key] = spell(argument.name);
    let value = args[argument.name] ?? argument.default;
    if (value === undefined) continue;
    if (field.kind === 'enum' && typeof value === 'string') value = lower(value);
    if (argument.unitArgument !== undefined) {
      const unit = args[argument.unitArgument] ?? FAULT_ARGUMENT_DEFAULTS[argument.unitArgument];
      value = parseBandwidth(value as number, unit as string);
    }
    spec[field.key] = value;
  }
  try {
    validateFault(spec);
    return spec as unknown as FaultSpec;
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    throw new InputError(
      error.message.replace(/: (\w+) must/, (whole, field: string) => `: ${argumentOf[field] ?? field} must`),
    );
  }
}

/**
 * When the fault is active: `fault_start` (default 0) and `fault_duration` (default: to the end),
 * each a duration or a percentage of `duration` ("20%").
 */
function faultWindow(args: ScenarioArguments, durationMs: number, spell: Spell): { startMs: number; endMs: number } {
  const at = (text: string | undefined, what: string, fallback: number): number => {
    if (text === undefined || text.trim() === '') return fallback;
    const percent = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text);
    if (percent) {
      const value = Number(percent[1]);
      if (value > 100) throw new InputError(`${what}: ${text} is over 100%`);
      return (value / 100) * durationMs;
    }
    return parseDuration(text, what);
  };
  const startMs = at(args.fault_start, spell('fault_start'), 0);
  if (startMs >= durationMs)
    throw new InputError(
      `${spell('fault_start')}: ${args.fault_start} is not before the end of the ` +
        `run (${args.duration ?? SCENARIO_DEFAULTS.duration})`,
    );
  const lengthMs = at(args.fault_duration, spell('fault_duration'), durationMs - startMs);
  if (lengthMs <= 0) throw new InputError(`${spell('fault_duration')}: must be above 0`);
  return { startMs, endMs: Math.min(durationMs, startMs + lengthMs) };
}

/**
 * The most connections the load may open: `max_connections` when given, else as many as the rate
 * can need (rate × timeout: every request in flight until its timeout) up to
 * DEFAULT_MAX_CONNECTIONS (why: see there), never fewer than `num_clients`. Either way no more than the process can
 * hold: each connection is a socket, and
 * three when the load goes through the in-process proxy (the load's, the proxy's accepted one and
 * its upstream), with RESERVED_FDS kept free; and no more than the generator's MAX_CONNECTIONS.
 */
function connectionBudget(
  args: ScenarioArguments,
  clients: number,
  rate: number,
  timeoutSeconds: number,
  throughProxy: boolean,
  spell: Spell,
): number {
  const limit = openFileLimit();
  const socketsPerConnection = throughProxy ? 3 : 1;
  const fdCap =
    limit === undefined ? MAX_CONNECTIONS : Math.floor(Math.max(0, limit - RESERVED_FDS) / socketsPerConnection);
  const cap = Math.min(MAX_CONNECTIONS, fdCap);
  const why =
    cap === MAX_CONNECTIONS
      ? `the load generator opens at most ${MAX_CONNECTIONS}`
      : `this process may open ${limit} files (ulimit -n) and each ` +
        `connection takes ${socketsPerConnection} socket${socketsPerConnection > 1 ? 's' : ''}${throughProxy ? ' through the fault proxy' : ''}`;
  if (clients > cap)
    throw new InputError(
      `${spell('num_clients')}: ${clients} is more than the ${cap} connections this run can hold (${why})`,
    );
  if (args.max_connections !== undefined) {
    const max = positiveInteger(args.max_connections, spell('max_connections'));
    if (max < clients)
      throw new InputError(
        `${spell('max_connections')}: ${max} is fewer than ${spell('num_clients')} (${clients}); ` +
          `give at least ${clients}`,
      );
    if (max > cap)
      throw new InputError(
        `${spell('max_connections')}: ${max} is more than the ${cap} connections this run can hold (${why})`,
      );
    return max;
  }
  return Math.max(clients, Math.min(cap, DEFAULT_MAX_CONNECTIONS, Math.ceil(rate * timeoutSeconds)));
}

function lower(value: string): string {
  return value.trim().toLowerCase();
}

function parseHeaders(lines: string[], spell: Spell): Record<string, string> {
  const headers: Record<string, string> = {};
  lines.forEach((line, index) => {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) {
      throw new InputError(`${spell('headers')}[${index}]: "${line}" is not "Name: value"`);
    }
    const value = line.slice(colon + 1).trim();
    // Checked here, before the run starts, so the error names the argument as given.
    if (/[\r\n\0]/.test(value))
      throw new InputError(
        `${spell('headers')}[${index}]: the value of ${name} contains CR, LF or NUL; give one header per entry`,
      );
    headers[name] = value;
  });
  return headers;
}

function positiveInteger(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InputError(`${what}: must be a whole number ≥ 1 (got ${value})`);
  return value;
}

function positiveNumber(value: number, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new InputError(`${what}: must be a number above 0 (got ${value})`);
  return value;
}

function choice(value: string, accepted: readonly string[], what: string): string {
  const normalized = value.trim().toLowerCase();
  if (!accepted.includes(normalized)) throw new InputError(`${what}: "${value}" is not one of ${accepted.join(', ')}`);
  return normalized;
}
