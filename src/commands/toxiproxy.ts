/**
 * `faultline toxiproxy` serves Toxiproxy's HTTP API (src/toxiproxy/) with toxiproxy-server's own
 * flags (-host, -port, -config, one dash or two); `faultline toxiproxy-cli` speaks toxiproxy-cli's
 * commands to it (or to a real Toxiproxy), so a script written for either changes one word.
 */
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { messageOf } from '../kernel/errors.js';
import { bindRefusal } from '../target-policy.js';
import type { CliClient, ToxicOptions } from '../toxiproxy/cli.js';
import { runCommand, UsageError, withInterrupt } from './run-command.js';
import { portNumber } from './parsers.js';
import { addTargetOptions, type GlobalOptions, type TargetOptionValues } from './flags.js';
import { envFlag, targetAllowanceFrom } from './flag-values.js';

interface ServerOptions extends TargetOptionValues {
  host: string;
  port: number;
  config?: string;
  seed?: string;
  adminToken?: string;
  allowNonLoopbackBind?: boolean;
  allowProduction?: boolean;
  proxyMetrics?: boolean;
  runtimeMetrics?: boolean;
}

type CliModule = typeof import('../toxiproxy/cli.js');

interface CliOptions {
  host: string;
}

export function registerToxiproxyCommands(program: Command, _globals?: () => GlobalOptions): void {
  registerServer(program);
  registerCli(program);
}

function registerServer(program: Command): void {
  const command = program
    .command('toxiproxy')
    .summary("serve Toxiproxy's HTTP API: its clients and toxics, on faultline's proxies")
    .description(
      "A drop-in for toxiproxy-server: Toxiproxy's endpoints, status codes and JSON, its toxics (latency, bandwidth, " +
        'slow_close, timeout, reset_peer, slicer, limit_data) as ' +
        'faultline faults, plus packet_loss, jitter, blackhole ' +
        'and the HTTP faults (http_error, …). toxiproxy-server flags work with one dash too (-host, -port, -config). ' +
        'Listens on loopback; another address needs ' +
        '--allow-non-loopback-bind and --admin-token. See ' +
        'docs/toxiproxy.md.',
    )
    .addOption(new Option('--host <host>', 'address the API listens on').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port the API listens on').argParser(portNumber).default(8474))
    .addOption(new Option('--config <file>', 'JSON file of proxies to create at start (as POST /populate takes)'))
    .addOption(new Option('--seed <seed>', 'seed for the random toxic decisions (default: random)'))
    .addOption(
      new Option(
        '--admin-token <token>',
        'bearer token every request must carry (needed beyond loopback); also serves /chaos/* on the same port',
      ).env('FAULTLINE_ADMIN_TOKEN'),
    )
    .addOption(
      new Option(
        '--allow-non-loopback-bind',
        'let the API and the proxies listen beyond loopback (env FAULTLINE_ALLOW_NON_LOOPBACK_BIND=1)',
      ),
    )
    .addOption(
      new Option(
        '--allow-production',
        'serve even where the environment says production (NODE_ENV, ENVIRONMENT … = prod*, production, prd, ' +
          'live; env FAULTLINE_ALLOW_PRODUCTION=1)',
      ),
    )
    .addOption(new Option('--proxy-metrics', "accepted for toxiproxy-server's sake: /metrics is always served"))
    .addOption(new Option('--runtime-metrics', "accepted for toxiproxy-server's sake: /metrics is always served"));
  addTargetOptions(command);
  command
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  faultline toxiproxy                                   API on 127.0.0.1:8474\n' +
        '  faultline toxiproxy -port 8475 -config proxies.json   as toxiproxy-server is started\n' +
        '  faultline toxiproxy --allow-targets redis,10.0.0.0/8  upstreams beyond loopback',
    )
    .action((options: ServerOptions) => runCommand(() => serve(options)));
}

async function serve(options: ServerOptions): Promise<void> {
  const allowNonLoopbackBind =
    options.allowNonLoopbackBind ?? envFlag('FAULTLINE_ALLOW_NON_LOOPBACK_BIND', process.env);
  const host = options.host === 'localhost' ? '127.0.0.1' : options.host;
  if (options.adminToken !== undefined && options.adminToken.trim() === '')
    throw new UsageError('--admin-token: must not be blank');
  const refusal = bindRefusal(host, {
    argument: `--host ${options.host}`,
    what: 'the Toxiproxy API',
    allowNonLoopbackBind,
    token: { value: options.adminToken, flag: '--admin-token (or FAULTLINE_ADMIN_TOKEN)' },
  });
  if (refusal !== undefined) throw new UsageError(refusal);
  const config = options.config === undefined ? undefined : await readConfig(options.config);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const { startToxiproxyServer } = await import('../toxiproxy/server.js');
  await withInterrupt(async (signal) => {
    const server = await startToxiproxyServer({
      host,
      port: options.port,
      token: options.adminToken,
      seed: options.seed,
      policy: { ...targetAllowanceFrom(options), allowNonLoopbackBind },
      allowProduction: options.allowProduction === true,
      log,
    });
    try {
      if (config !== undefined) {
        const { proxies, error } = await server.collection.populate(config).catch((failure: unknown) => ({
          proxies: [],
          error: failure as Error,
        }));
        if (error) throw new UsageError(`--config ${options.config}: ${messageOf(error)}`);
        log(`toxiproxy: populated ${proxies.length} proxies from ${options.config}`);
      }
      log(`toxiproxy: API listening on ${server.url}`);
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    } finally {
      // Every proxy, listener and connection closed before the process ends: no port left open.
      await server.close();
    }
  });
}

async function readConfig(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--config ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? messageOf(error)})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${file}: not JSON (${messageOf(error)})`);
  }
}

function registerCli(program: Command): void {
  const cli = program
    .command('toxiproxy-cli')
    .summary("toxiproxy-cli's commands: list, inspect, create, toggle, delete, toxic add|update|remove")
    .description(
      'Talks to a Toxiproxy API (faultline toxiproxy, or a real toxiproxy-server) as toxiproxy-cli does, with its ' +
        "flags (-h is the host, as in toxiproxy-cli: --help or 'help' for help) and its output when not on a terminal.",
    )
    // toxiproxy-cli's -h is --host, so help is --help alone here (and in the subcommands, which inherit it).
    .helpOption('--help', 'show help for a command')
    .addOption(
      new Option('-h, --host <url>', 'the Toxiproxy API')
        .env('TOXIPROXY_URL')
        .default('http://localhost:8474')
        // Go's flag package takes -h=URL; commander hands that over as "=URL".
        .argParser((value: string) => value.replace(/^=/, '')),
    );
  const run: Run = (work) => (): Promise<void> =>
    runCommand(async () => {
      const cliModule = await import('../toxiproxy/cli.js');
      const options = cli.opts<CliOptions>();
      try {
        process.stdout.write(await work(cliModule.cliClient(options.host), cliModule));
      } catch (error) {
        if (!(error instanceof cliModule.CliError)) throw error;
        process.stderr.write(`${error.message}\n`);
        process.exitCode = 1;
      }
    });
  cli
    .command('list')
    .aliases(['l', 'li', 'ls'])
    .description('list all proxies')
    .action(run((client, m) => m.list(client)));
  cli
    .command('inspect')
    .aliases(['i', 'ins'])
    .argument('[proxyName]')
    .description("list a proxy's toxics")
    .action((name?: string) => run((client, m) => m.inspect(client, name))());
  cli
    .command('create')
    .aliases(['c', 'new'])
    .argument('[proxyName]')
    .description('create a new proxy')
    .option('-l, --listen <address>', 'proxy will listen on this address')
    .option('-u, --upstream <address>', 'proxy will forward to this address')
    .action((name: string | undefined, options: { listen?: string; upstream?: string }) =>
      run((client, m) => m.create(client, name, options.listen, options.upstream))(),
    );
  cli
    .command('toggle')
    .alias('tog')
    .argument('[proxyName]')
    .description('toggle enabled status on a proxy')
    .action((name?: string) => run((client, m) => m.toggle(client, name))());
  cli
    .command('delete')
    .alias('d')
    .argument('[proxyName]')
    .description('delete a proxy')
    .action((name?: string) => run((client, m) => m.remove(client, name))());
  registerToxicCommands(cli, run);
}

type Run = (work: (client: CliClient, cliModule: CliModule) => Promise<string>) => () => Promise<void>;

function registerToxicCommands(cli: Command, run: Run): void {
  const toxic = cli.command('toxic').alias('t').description('add, remove or update a toxic');
  const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
  const common = (command: Command): Command =>
    command.argument('[proxyName]').option('-n, --toxicName <name>', 'name of the toxic');
  common(toxic.command('add').alias('a').description('add a new toxic'))
    .option('-t, --type <type>', 'type of toxic')
    .option('--toxicity <p>', 'toxicity of toxic should be a float between 0 and 1')
    .option('-a, --attribute <key=value>', 'toxic attribute in key=value format (repeatable)', collect)
    .option('-u, --upstream', 'add toxic to upstream')
    .option('-d, --downstream', 'add toxic to downstream')
    .action((name: string | undefined, options: ToxicOptions) =>
      run((client, m) => m.addToxic(client, name, options))(),
    );
  common(toxic.command('update').alias('u').description('update an enabled toxic'))
    .option('--toxicity <p>', 'toxicity of toxic should be a float between 0 and 1')
    .option('-a, --attribute <key=value>', 'toxic attribute in key=value format (repeatable)', collect)
    .action((name: string | undefined, options: ToxicOptions) =>
      run((client, m) => m.updateToxic(client, name, options))(),
    );
  common(toxic.command('remove').aliases(['r', 'delete', 'd']).description('remove an enabled toxic')).action(
    (name: string | undefined, options: ToxicOptions) => run((client, m) => m.removeToxic(client, name, options))(),
  );
}
