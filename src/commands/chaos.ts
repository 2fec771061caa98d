/**
 * `faultline chaos inject|status|clear|clear-all`: mcp-chaos-monkey's CLI spelling, but talking to
 * a running `faultline proxy --admin` over its admin API, so a fault injected from one shell
 * reaches the proxy running in another (mcp-chaos-monkey's CLI changes only its own process).
 */
import { Option, type Command } from 'commander';
import { numberIn } from './parsers.js';
import { addChaosFlags, chaosConfig, connectionConfig, HTTP_ONLY_FLAGS } from './chaos-flags.js';
import { attributeOf } from './fault-flags.js';
import { CONNECTION_FAULT_TYPES, HTTP_FAULT_TYPES, NETWORK_FAULT_TYPES } from '../proxy/vocabulary.js';
import { faultKind } from '../proxy/http/spec.js';
import { runCommand, UsageError } from './run-command.js';
import { OperationalError } from '../kernel/errors.js';
import { type GlobalOptions } from './flags.js';

interface ChaosOptions {
  admin?: string;
  token?: string;
}

interface InjectOptions extends ChaosOptions {
  duration?: number;
  config?: string;
  /** Each fault field's flag (chaos-flags.ts): `status`, `delay`, `retryAfter`, … */
  [fieldFlag: string]: unknown;
}

/** mcp-chaos-monkey's kebab-case spelling of the proxy's own lists (snake_case is accepted too). */
const kebab = (type: string): string => type.replace(/_/g, '-');
const HTTP_TYPES: readonly string[] = HTTP_FAULT_TYPES.map(kebab);
const NETWORK_ONLY_TYPES: readonly string[] = [...NETWORK_FAULT_TYPES, ...CONNECTION_FAULT_TYPES]
  .map(kebab)
  .filter((type) => !HTTP_TYPES.includes(type));
/** Every type the admin API accepts, for the help and for the refusal of any other. */
const ACCEPTED_TYPES =
  `${HTTP_TYPES.join(', ')}; network faults (their fields in --config, ` +
  `the connection faults' by flag too): ${NETWORK_ONLY_TYPES.join(', ')}`;

export function registerChaosCommand(program: Command, _globals?: () => GlobalOptions): void {
  const chaos = program
    .command('chaos')
    .summary("inject, list and clear faults in a running proxy's admin API (mcp-chaos-monkey's CLI)")
    .description(
      "Talks to 'faultline proxy --admin' over HTTP. TARGET is a mapping's local port or its #name. " +
        'The admin URL and token come from --admin/--token or FAULTLINE_ADMIN_URL/FAULTLINE_ADMIN_TOKEN.',
    );
  const common = (command: Command): Command =>
    command
      .addOption(
        new Option('--admin <url>', 'admin API of the running proxy: http://127.0.0.1:9090 or 127.0.0.1:9090').env(
          'FAULTLINE_ADMIN_URL',
        ),
      )
      .addOption(new Option('--token <token>', 'its bearer token').env('FAULTLINE_ADMIN_TOKEN'));

  common(
    addChaosFlags(chaos.command('inject'))
      .argument('<target>', "a mapping's local port or #name")
      .argument('<type>', ACCEPTED_TYPES)
      .description('Inject a fault; prints its id. --delay feeds latency and timeout, as in mcp-chaos-monkey.')
      .addOption(
        new Option('--duration <seconds>', 'expire after this many seconds (default: until cleared)').argParser(
          numberIn(0.001, 86_400),
        ),
      )
      .addOption(
        new Option(
          '--config <json>',
          'extra fields of the fault config as JSON (e.g. a network fault {"latencyMs":200})',
        ),
      )
      // Accepted, without effect, for scripts that pass it: the proxy taking the fault was guarded
      // at its start, in its own environment (src/production.ts), which this shell's says nothing of.
      .addOption(new Option('--allow-production').hideHelp()),
  )
    .addHelpText(
      'after',
      '\nOn a Redis mapping (redis://, or one whose connections speak ' +
        'RESP) latency, timeout, error, connection-refused and ' +
        'connection-drop act per command; ' +
        'on another non-HTTP stream latency, timeout, connection-refused ' +
        'and connection-drop act per message; a fault the mapping cannot ' +
        'express is refused.\n' +
        '\nExamples:\n  faultline chaos inject weather-api error --status ' +
        '503 --duration 30 --admin 127.0.0.1:9090 --token s3cret\n  ' +
        'faultline chaos inject 34000 latency --delay 500 --probability ' +
        '0.5\n  faultline chaos inject redis connection-refused ' +
        '--duration 30\n  faultline chaos inject 34000 slicer --slicer 64 --slicer-delay 1000',
    )
    .action((target: string, type: string, options: InjectOptions) =>
      runCommand(async () => {
        const config = injectConfig(type, options);
        const body: Record<string, unknown> = { target, config };
        if (options.duration !== undefined) body['durationMs'] = Math.round(options.duration * 1000);
        const answer = await call(options, 'POST', '/chaos/inject', body);
        process.stdout.write(`${String(answer['faultId'])}\n`);
      }),
    );

  common(chaos.command('status').description('List the active faults: id → target [type] (N requests, …).')).action(
    (options: ChaosOptions) =>
      runCommand(async () => {
        const answer = await call(options, 'GET', '/chaos/status');
        const faults = Array.isArray(answer['faults']) ? (answer['faults'] as Array<Record<string, unknown>>) : [];
        if (faults.length === 0) process.stdout.write('No active faults\n');
        for (const f of faults) {
          // The unit the plane names (faultline's do); mcp-chaos-monkey's counts requests and names none.
          const count = String(f['requestCount']);
          const unit = `${typeof f['unit'] === 'string' ? f['unit'] : 'request'}${count === '1' ? '' : 's'}`;
          process.stdout.write(
            `${String(f['id'])} → ${String(f['target'])} [${String(f['type'])}] (${count} ${unit})\n`,
          );
        }
      }),
  );

  common(
    chaos
      .command('clear')
      .argument('<id>', 'the id inject printed')
      .description('Clear one fault (an unknown id is an error).'),
  ).action((id: string, options: ChaosOptions) =>
    runCommand(async () => {
      await call(options, 'POST', '/chaos/clear', { faultId: id });
      process.stdout.write(`Cleared ${id}\n`);
    }),
  );

  common(chaos.command('clear-all').description('Clear every injected fault.')).action((options: ChaosOptions) =>
    runCommand(async () => {
      await call(options, 'POST', '/chaos/clear-all', {});
      process.stdout.write('Cleared all faults\n');
    }),
  );
}

/** mcp-chaos-monkey's CLI mapping from flags to a fault config. */
export function injectConfig(type: string, options: InjectOptions): Record<string, unknown> {
  const normalized = type.trim().toLowerCase().replace(/_/g, '-');
  let extra: Record<string, unknown> = {};
  if (options.config !== undefined) {
    try {
      extra = JSON.parse(options.config) as Record<string, unknown>;
    } catch {
      throw new UsageError('--config: not JSON');
    }
    if (typeof extra !== 'object' || extra === null || Array.isArray(extra))
      throw new UsageError('--config: a JSON object');
  }
  const config: Record<string, unknown> = { type: normalized, ...extra };
  // Refused here, before any request, with the whole list (the admin API would refuse it too,
  // but only once it is reachable and with the token right).
  const effective = typeof config['type'] === 'string' ? kebab(config['type'].trim().toLowerCase()) : '';
  if (!HTTP_TYPES.includes(effective) && !NETWORK_ONLY_TYPES.includes(effective)) {
    throw new UsageError(
      `fault type ${JSON.stringify(config['type'])} is unknown; accepted: ${ACCEPTED_TYPES} (snake_case too)`,
    );
  }
  // The admin API's own rule: a latency given a network fault's field is the network fault.
  const isNetwork = faultKind(config) === 'network';
  const connection = connectionConfig(effective, options);
  if (isNetwork) {
    // Dropped silently, they would widen the fault to every request of the target.
    const httpOnly = HTTP_ONLY_FLAGS.filter((flag) => options[attributeOf(flag)] !== undefined);
    if (httpOnly.length > 0) {
      throw new UsageError(
        `${httpOnly.map((flag) => `--${flag}`).join(', ')}: only HTTP ` +
          `faults take ${httpOnly.length > 1 ? 'these' : 'this'}; the ` +
          `network fault ${normalized} acts on all the traffic of its ` +
          `target`,
      );
    }
    Object.assign(config, connection);
  } else Object.assign(config, chaosConfig(normalized, options, extra));
  return config;
}

async function call(
  options: ChaosOptions,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  if (!options.admin) throw new UsageError('give the admin API: --admin 127.0.0.1:PORT or FAULTLINE_ADMIN_URL');
  if (!options.token) throw new UsageError('give the admin token: --token T or FAULTLINE_ADMIN_TOKEN');
  const { adminRequest, AdminRequestError } = await import('../proxy/control/client.js');
  try {
    // A person's own admin API: any host but link-local and metadata ones, checked at connect.
    const { targetLookup } = await import('../target-policy.js');
    return await adminRequest(
      { url: options.admin, token: options.token, lookup: targetLookup(true) },
      method,
      path,
      body,
    );
  } catch (error) {
    // A refused token (401, 403) is no wrong flag or input: the command was right, the admin API said no — an
    // error, exit 1, naming where the token comes from.
    if (error instanceof AdminRequestError && (error.status === 401 || error.status === 403))
      throw new OperationalError(`${error.message}; check --token (or FAULTLINE_ADMIN_TOKEN)`);
    // Another 4xx: the request was wrong (bad config, unknown id) — a usage error, exit 2.
    if (error instanceof AdminRequestError && error.status >= 400 && error.status < 500)
      throw new UsageError(error.message);
    throw error;
  }
}
