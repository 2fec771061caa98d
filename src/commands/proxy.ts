/**
 * `faultline proxy`: runs the fault proxy standalone until Ctrl-C (or SIGTERM), so a person can
 * put any app behind it. One line per connection event goes to stderr; when it stops, the
 * counters are printed to stdout as JSON (and, with --json FILE, a run record of kind network that
 * `faultline coverage` reads: proxy/run-record.ts).
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { messageOf } from '../kernel/errors.js';
import { parseBandwidth, validateFaults, type FaultSpec, type ProxyCounters } from '../proxy/index.js';
import { commandOf, type FieldDeclaration } from '../proxy/faults/declaration.js';
import { LIST_FAULTS } from '../proxy/faults/declarations.js';
import { bindRefusal, describeTargets, isLoopbackAddress, type TargetAllowance } from '../target-policy.js';
import { checkWritable, runCommand, UsageError, withInterrupt } from './run-command.js';
import { collect, parseListenAddress } from './parsers.js';
import { type GlobalOptions } from './flags.js';
import { addFaultFlags, attributeOf, fieldFlags, flagValue, placeholder } from './fault-flags.js';

export interface ProxyCommandOptions {
  proxy?: string[];
  seed?: string;
  tlsInsecure?: boolean;
  allowNonLoopbackBind?: boolean;
  tlsCa?: string;
  http?: boolean;
  httpFault?: string[];
  admin?: string;
  adminToken?: string;
  allowProduction?: boolean;
  json?: string;
  /** Each fault's own flags (from its declaration) and its --<fault>-side / --<fault>-direction. */
  [faultFlag: string]: unknown;
}

export function registerProxyCommand(program: Command, _globals?: () => GlobalOptions): void {
  const command = program
    .command('proxy')
    .summary('run the fault proxy in front of any app until Ctrl-C')
    .description(
      'Listen on each --proxy mapping and forward to its remote, injecting the faults given by the flags. ' +
        'Each fault acts on side server (proxy↔target) or client ' +
        '(client↔proxy), direction ingress (what the proxy reads there), ' +
        'egress (what it writes) or both; the default server+ingress ' +
        'delays responses. Connection events go to stderr; ' +
        'the counters are printed to stdout as JSON on exit.',
    )
    .addOption(
      new Option(
        '--proxy <mapping>',
        'LOCAL=REMOTE, repeatable: 34000=host:443 (TLS, SNI host), ' +
          '127.0.0.1:0=tcp://host:443 (plain), [::1]:8080=https://host, ' +
          '6380=redis://host:6379#cache (Redis)',
      ).argParser(collect),
    );
  addFaultFlags(command, 'proxy')
    .addOption(new Option('--seed <seed>', 'seed for the random fault decisions (default: random, printed at start)'))
    .addOption(new Option('--tls-ca <file>', 'PEM file of extra CA certificates trusted for TLS remotes'))
    .addOption(new Option('--tls-insecure', 'do not verify the certificates of TLS remotes'))
    .addOption(
      new Option(
        '--http',
        'read each connection as HTTP/1.1, Redis (RESP) or an opaque ' +
          'stream so request faults can act on its requests, commands or ' +
          'messages (implied by --http-fault and --admin)',
      ),
    )
    .addOption(
      new Option(
        '--http-fault <json>',
        'add a fault config, repeatable, applied in order: HTTP faults ' +
          '{"type":"error","statusCode":503,"probability":0.5} (types ' +
          'latency, error, rate_limit, timeout, malformed, schema_mismatch, ' +
          'connection_refused, connection_drop; camelCase or snake_case, ' +
          'optional method, path glob, target) or network faults ' +
          '{"type":"latency","latencyMs":200}',
      ).argParser(collect),
    )
    .addOption(
      new Option(
        '--admin <[host:]port>',
        "serve the admin API (mcp-chaos-monkey's /chaos/* routes) on 127.0.0.1:PORT or HOST:PORT; needs --admin-token",
      ),
    )
    .addOption(new Option('--admin-token <token>', 'bearer token the admin API requires').env('FAULTLINE_ADMIN_TOKEN'))
    .addOption(
      new Option(
        '--allow-production',
        'run even where the environment says production (NODE_ENV, ' +
          'ENVIRONMENT, APP_ENV, RAILS_ENV … = prod*, production, prd, ' +
          'live; env FAULTLINE_ALLOW_PRODUCTION=1)',
      ),
    )
    .addOption(
      new Option(
        '--json <file>',
        'write a run record for `faultline coverage` to FILE on exit ' +
          '(kind network: the faults that acted; the counters under ' +
          '"counters")',
      ),
    )
    .addOption(
      new Option(
        '--allow-non-loopback-bind',
        'let mappings and --admin listen on addresses other than ' +
          '127.0.0.1/::1, e.g. 0.0.0.0 (exposes the relay to the network)',
      ),
    );
  for (const declaration of LIST_FAULTS) {
    const fault = commandOf(declaration);
    command
      .addOption(
        new Option(`--${fault}-side <side>`, `side the ${fault} fault acts on (default server)`).choices([
          'client',
          'server',
        ]),
      )
      .addOption(
        new Option(
          `--${fault}-direction <direction>`,
          `direction the ${fault} fault acts on (default ${declaration.direction ?? 'ingress'})`,
        ).choices(['ingress', 'egress', 'both']),
      );
  }
  command
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  faultline proxy --proxy 34000=api.example.com:443 --latency 200 --latency-deviation 50\n' +
        '  faultline proxy --proxy 0=127.0.0.1:8080 --bandwidth 64 --bandwidth-unit kbps --packet-loss 0.02\n' +
        '  faultline proxy --proxy 5433=tls://db.internal:5432 --tls-ca ca.pem --blackhole --blackhole-side client\n' +
        '  faultline proxy --proxy ' +
        '34000=https://api.example.com#weather-api --http-fault ' +
        '\'{"type":"rate-limit","retryAfterSeconds":5,"probability":0.2}\'\n' +
        '  FAULTLINE_ADMIN_TOKEN=s3cret faultline proxy --proxy ' +
        '34000=127.0.0.1:8080#api --admin 9090   (then: faultline chaos ' +
        'inject api error --status 503 --admin 127.0.0.1:9090)\n' +
        '  FAULTLINE_ADMIN_TOKEN=s3cret faultline proxy --proxy ' +
        '6380=redis://127.0.0.1:6379#redis --admin 9090   (then: ' +
        'faultline chaos inject redis latency --delay 2000 --admin ' +
        '127.0.0.1:9090)',
    )
    .action((options: ProxyCommandOptions) =>
      runCommand(async () => {
        // Checked before the proxy starts, so a session's record is not lost to a mistyped path.
        if (options.json) await checkWritable('--json', options.json);
        const startedAt = new Date();
        const counters = await withInterrupt((signal) =>
          runProxy(options, signal, (line) => process.stderr.write(`${line}\n`)),
        );
        process.stdout.write(`${JSON.stringify(counters, null, 2)}\n`);
        if (options.json) {
          const { networkRunRecord } = await import('../proxy/run-record.js');
          const name = `proxy ${(options.proxy ?? []).join(' ')}`;
          await writeFile(options.json, `${JSON.stringify(networkRunRecord(counters, name, startedAt), null, 2)}\n`);
        }
      }),
    );
}

/**
 * The fault specs the flags ask for (validated): each fault its declaration's switch flag turns on
 * (`--latency`, `--blackhole`), with its other flags; one of those without the switch is a mistake.
 */
export function faultsFromOptions(options: ProxyCommandOptions): FaultSpec[] {
  const flags = fieldFlags('proxy');
  const specs: FaultSpec[] = [];
  for (const fault of LIST_FAULTS) {
    if (!fault.proxyFlag) continue;
    const own = flags.filter((flag) => flag.fault === fault);
    const switchName = fault.proxyFlag.name;
    const switchFlag = own.find((flag) => flag.shown === switchName);
    const on = switchFlag ? flagValue(options, switchFlag) : options[attributeOf(switchName)];
    const given = own.filter((flag) => flag !== switchFlag && flagValue(options, flag) !== undefined);
    if (on === undefined || on === false) {
      if (given.length > 0) {
        const names = own.filter((flag) => flag !== switchFlag).map((flag) => `--${flag.shown}`);
        const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names.join('');
        throw new UsageError(`${list} need --${switchName}${switchFlag ? ` ${placeholder(switchFlag.field)}` : ''}`);
      }
      continue;
    }
    const spec: Record<string, unknown> = { type: fault.type };
    for (const flag of own) {
      const field = flag.field as FieldDeclaration;
      const value = flagValue(options, flag);
      if (value === undefined || field.argumentOnly) continue;
      const unitFlag = own.find((other) => other.field.argument?.name === field.argument?.unitArgument);
      spec[field.key] =
        field.argument?.unitArgument !== undefined
          ? parseBandwidth(value as number, unitFlag ? (flagValue(options, unitFlag) as string | undefined) : undefined)
          : value;
    }
    const command = attributeOf(commandOf(fault));
    spec['side'] = options[`${command}Side`];
    spec['direction'] = options[`${command}Direction`];
    // Drop the flags left unset so validation sees only what was given.
    specs.push(Object.fromEntries(Object.entries(spec).filter(([, value]) => value !== undefined)) as never);
  }
  validateFaults(specs);
  return specs;
}

/** What `faultline proxy` may dial: the remotes its own --proxy flags name (a mapping that does not parse is refused by
 * startProxy). */
async function namedRemotes(mappings: readonly string[]): Promise<TargetAllowance> {
  const { parseMapping } = await import('../proxy/mapping.js');
  const hosts = new Set<string>();
  for (const text of mappings) {
    try {
      const host = parseMapping(text).remoteHost.replace(/^\[|\]$/g, '');
      if (!isLoopbackAddress(host)) hosts.add(host);
    } catch {
      // Named by startProxy, with its --proxy index.
    }
  }
  return { allowTargets: [...hosts] };
}

/** Runs the proxy the options describe until `signal` aborts; returns the final counters. */
export async function runProxy(
  options: ProxyCommandOptions,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<ProxyCounters> {
  if (!options.proxy?.length)
    throw new UsageError('give at least one --proxy LOCAL=REMOTE mapping, e.g. --proxy 34000=example.com:443');
  const faults = faultsFromOptions(options);
  let ca: string | undefined;
  if (options.tlsCa) {
    try {
      ca = readFileSync(options.tlsCa, 'utf8');
    } catch (error) {
      throw new UsageError(`--tls-ca ${options.tlsCa}: ${messageOf(error)}`);
    }
  }
  let admin: { host: string; port: number; token: string } | undefined;
  if (options.admin !== undefined) {
    if (options.adminToken === undefined)
      throw new UsageError('--admin needs a token: --admin-token T or FAULTLINE_ADMIN_TOKEN');
    // A blank token would make an API no request can use (the Bearer value is trimmed).
    if (options.adminToken.trim() === '') throw new UsageError('--admin-token: must not be blank');
    admin = { ...parseListenAddress(options.admin), token: options.adminToken };
    // The control plane binds like every listener (src/target-policy.ts bindRefusal); its token is required everywhere.
    const exposed = bindRefusal(admin.host, {
      argument: `--admin ${options.admin}`,
      what: 'the admin API',
      allowNonLoopbackBind: options.allowNonLoopbackBind === true,
      token: { value: admin.token, flag: '--admin-token T or FAULTLINE_ADMIN_TOKEN' },
    });
    if (exposed) throw new UsageError(exposed);
  }
  const targets = await namedRemotes(options.proxy);
  const { assembleProxy, describeEvent } = await import('../proxy/control/assemble.js');
  const assembled = await assembleProxy({
    mappings: options.proxy,
    faults,
    configs: options.httpFault ?? [],
    configLabel: (index) => `--http-fault #${index + 1}`,
    http: options.http === true,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    tls: { rejectUnauthorized: !options.tlsInsecure, ...(ca ? { ca } : {}) },
    onEvent: (event) => log(describeEvent(event)),
    // The person at the terminal names the remotes: those (and loopback) are what it may dial,
    // never link-local or metadata addresses; binds stay on loopback unless asked (src/target-policy.ts).
    policy: { ...targets, allowNonLoopbackBind: options.allowNonLoopbackBind === true, argument: '--proxy' },
    allowProduction: options.allowProduction === true,
    ...(admin
      ? {
          admin: { ...admin, log },
          registry: (event) =>
            log(`${new Date().toISOString()} admin: ${event.type} ${event.id} (${event.faultType} on ${event.target})`),
        }
      : {}),
  });
  const { proxy } = assembled;
  try {
    proxy.mappings.forEach((mapping, i) => {
      const listen = mapping.listenHost.includes(':') ? `[${mapping.listenHost}]` : mapping.listenHost;
      log(
        `listening on ${listen}:${proxy.ports[i]} → ` +
          `${mapping.remoteHost}:${mapping.remotePort}${mapping.tls ? ` (TLS${mapping.servername ? `, SNI ${mapping.servername}` : ''})` : ''}${mapping.name ? ` #${mapping.name}` : ''}${proxy.http ? ` (${CARRIES[mapping.protocol ?? 'sniffed']})` : ''}`,
      );
    });
    const started = [...assembled.faults.network, ...assembled.faults.http];
    log(
      `faults: ${started.length ? started.map((f) => f.type).join(', ') : 'none'}; seed ${proxy.seed}; Ctrl-C to stop`,
    );
    log(`targets: ${describeTargets(targets)}`);
    if (assembled.admin) {
      log(
        `admin API on ${assembled.admin.url} (GET /chaos/status, POST ` +
          `/chaos/inject, /chaos/clear, /chaos/clear-all, GET /metrics; ` +
          `Bearer token)`,
      );
    }
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  } finally {
    await assembled.stop();
  }
  log('stopped');
  return proxy.counters();
}

/**
 * What a protocol-aware proxy reads a mapping as: its scheme's protocol, else whatever each
 * connection speaks (an undeclared mapping to a database is not HTTP).
 */
const CARRIES = {
  http: 'HTTP',
  resp: 'Redis',
  tcp: 'TCP, opaque',
  sniffed: 'HTTP, Redis or TCP, by what each connection speaks',
} as const;
