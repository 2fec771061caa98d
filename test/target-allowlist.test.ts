/**
 * The target policy's allow-list and the production guard, on every path that dials or injects
 * faults: loopback only by default; private ranges and named hosts by --allow-targets /
 * FAULTLINE_ALLOW_TARGETS; link-local and metadata never; shown in the report and the start-up
 * lines. The production detector refuses every fault-injecting path (MCP tools, `faultline proxy`
 * with or without --admin, `faultline run`, the tool-call proxies) unless allowed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { addressRefusal, describeTargets, parseAllowTargets, targetLookup } from '../src/target-policy.js';
import { isProductionName, productionSignal } from '../src/production.js';
import { makeConfig } from '../src/config.js';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { startCliProcess, type CliOutcome } from './helpers/processes.js';
import { runCliBatch } from './helpers/cli-batch.js';
import { startOkApp, type OkApp } from './helpers/ok-app.js';

let app: OkApp;
let url: string;
before(async () => {
  app = await startOkApp();
  url = app.url;
});
after(() => app.close());

test(
  'allow-list entries: CIDR blocks, addresses, host names, *.domain ' + 'and *; anything else refused naming the entry',
  () => {
    assert.deepEqual(
      parseAllowTargets('10.0.0.0/8, api.staging.local  *.svc.local,fd00::/8,192.168.1.7,*', '--allow-targets'),
      ['10.0.0.0/8', 'api.staging.local', '*.svc.local', 'fd00::/8', '192.168.1.7', '*'],
    );
    for (const [bad, message] of [
      ['10.0.0.0/33', /"10\.0\.0\.0\/33" is not a CIDR block: \/33 is too long for IPv4/],
      ['not a host!', /"host!" is not a CIDR block \(10\.0\.0\.0\/8\), an address, a host name/],
      ['x/8', /"x\/8" is not a CIDR block: the part before \/ is not an IP address/],
    ] as const) {
      assert.throws(
        () => parseAllowTargets(bad, '--allow-targets'),
        (error: Error) => /^--allow-targets: /.test(error.message) && message.test(error.message),
      );
    }
  },
);

test('loopback only by default; listed networks and names besides; link-local and metadata never', () => {
  assert.equal(addressRefusal('127.0.0.1', false), undefined);
  assert.equal(addressRefusal('::1', false), undefined);
  assert.match(
    addressRefusal('10.0.0.1', false) ?? '',
    /10\.0\.0\.1 is a private address; only loopback targets are accepted unless the server's allow-list names it/,
  );
  // A public address is refused for not being loopback, never as if a private one would do.
  assert.match(
    addressRefusal('8.8.8.8', false) ?? '',
    /^8\.8\.8\.8 is not a loopback address; only loopback targets are accepted unless the server's allow-list/,
  );
  assert.doesNotMatch(addressRefusal('8.8.8.8', false) ?? '', /private/);
  assert.match(addressRefusal('172.16.0.1', {}) ?? '', /private/);
  assert.match(addressRefusal('192.168.1.1', { allowTargets: [] }) ?? '', /private/);
  const listed = { allowTargets: ['10.0.0.0/8', 'api.staging.local', '*.svc.local'] };
  assert.equal(addressRefusal('10.9.8.7', listed), undefined);
  assert.match(addressRefusal('192.168.1.1', listed) ?? '', /private/);
  // A listed name reaches what it resolves to; an unlisted one does not.
  assert.equal(addressRefusal('192.168.1.1', listed, 'api.staging.local'), undefined);
  assert.equal(addressRefusal('192.168.1.1', listed, 'db.svc.local'), undefined);
  assert.match(addressRefusal('192.168.1.1', listed, 'other.local') ?? '', /private/);
  const everythings = [
    { allowTargets: ['*'] },
    { allowRemoteTargets: true },
    true,
    { allowTargets: ['0.0.0.0/0', '::/0', 'metadata.google.internal'] },
  ];
  for (const everything of everythings) {
    assert.equal(addressRefusal('8.8.8.8', everything), undefined, JSON.stringify(everything));
    for (const metadata of [
      '169.254.169.254',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      'fe80::1',
      'fd00:ec2::254',
      '100.100.100.200',
    ]) {
      assert.match(
        addressRefusal(metadata, everything, 'metadata.google.internal') ?? '',
        /never a target/,
        `${metadata} under ${JSON.stringify(everything)}`,
      );
    }
  }
  assert.equal(describeTargets(false), 'loopback only');
  assert.equal(describeTargets(listed), 'loopback, 10.0.0.0/8, api.staging.local, *.svc.local');
  assert.equal(describeTargets({ allowRemoteTargets: true }), 'any address but link-local and metadata');
});

test('the connect-time lookup applies the same policy after resolution', async () => {
  const resolve = (rules: Parameters<typeof targetLookup>[0], name: string) =>
    new Promise<{ error: NodeJS.ErrnoException | null; addresses: unknown }>((done) =>
      targetLookup(rules)(name, { all: true }, (error, addresses) => done({ error, addresses })),
    );
  assert.equal((await resolve(false, 'localhost')).error, null);
  const refused = await resolve({ allowTargets: ['localhost'] }, '169.254.169.254');
  assert.equal(refused.error?.code, 'ENOTLOCAL');
  assert.match(refused.error?.message ?? '', /never a target/);
});

test(
  'MCP tools: a private target is refused by default, and allowed ' + 'when listed; the report shows the policy',
  async () => {
    const strict = await connectInMemory();
    const listed = await connectInMemory(makeConfig({ scenario: { allowTargets: ['10.0.0.0/8'] } }));
    try {
      const scenario = (await strict.client.callTool({
        name: 'fault_run_latency_impact_scenario',
        arguments: { url: 'http://10.0.0.1/' },
      })) as CallToolResult;
      assert.equal(scenario.isError, true);
      assert.match(textOf(scenario), /^url: 10\.0\.0\.1 is a private address; .*--allow-targets/);
      const held = (await strict.client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=10.0.0.1:80'] },
      })) as CallToolResult;
      assert.match(textOf(held), /^proxies\[0\].*10\.0\.0\.1 is a private address/);
      const toolcall = (await strict.client.callTool({
        name: 'fault_run_tool_call_chaos_scenario',
        arguments: { url: 'http://192.168.1.1/mcp', calls: [{ tool: 'x' }] },
      })) as CallToolResult;
      assert.match(textOf(toolcall), /^url: 192\.168\.1\.1 is a private address/);
      const probe = (await strict.client.callTool({
        name: 'fault_probe_mcp_server',
        arguments: { url: 'http://172.16.0.1/mcp' },
      })) as CallToolResult;
      assert.match(textOf(probe), /^url: 172\.16\.0\.1 is a private address/);

      // Listed: the held proxy starts (it dials only when a client connects).
      const started = (await listed.client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=10.0.0.1:80'] },
      })) as CallToolResult;
      assert.equal(started.isError, undefined, textOf(started));
      await listed.client.callTool({
        name: 'fault_proxy_stop',
        arguments: { id: (started.structuredContent as { id: string }).id },
      });
      const metadata = (await listed.client.callTool({
        name: 'fault_proxy_start',
        arguments: { proxies: ['0=169.254.169.254:80'] },
      })) as CallToolResult;
      assert.match(textOf(metadata), /link-local or cloud metadata address, which is never a target/);
      const report = (await listed.client.callTool({
        name: 'fault_run_latency_impact_scenario',
        arguments: { url, duration: '200ms', latency: 1 },
      })) as CallToolResult;
      assert.equal(report.isError, undefined, textOf(report));
      assert.match(textOf(report), /^- Targets allowed: loopback, 10\.0\.0\.0\/8$/m);
    } finally {
      await strict.close();
      await listed.close();
    }
  },
);

test('the CLI: --allow-targets and FAULTLINE_ALLOW_TARGETS are checked, and faultline run obeys them', async () => {
  // Refusals before anything starts: through main() in one child (test/helpers/cli-batch.ts), not a process each.
  const [bad, badEnv, privateUrl] = (await runCliBatch([
    { args: ['mcp', '--allow-targets', '10.0.0.0/99'] },
    { args: ['run', 'latency', '--url', url], env: { FAULTLINE_ALLOW_TARGETS: 'exa mple!' } },
    { args: ['run', 'latency', '--url', 'http://10.0.0.1/'] },
  ])) as [CliOutcome, CliOutcome, CliOutcome];
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--allow-targets.*10\.0\.0\.0\/99.*too long/);
  assert.equal(badEnv.code, 2);
  assert.match(badEnv.stderr, /^faultline: FAULTLINE_ALLOW_TARGETS: "mple!" is not/m);
  assert.equal(privateUrl.code, 2);
  assert.match(privateUrl.stderr, /--url: 10\.0\.0\.1 is a private address; .*--allow-targets/);
});

test("faultline proxy's start-up line names what it may dial", async () => {
  const line = await firstLines(['proxy', '--proxy', `0=${url.slice(7, -1)}`], {}, /targets: /);
  assert.match(line, /targets: loopback only/);
});

test('the production detector: the variables frameworks use, prod* words, not preprod or staging', () => {
  for (const value of ['production', 'PROD', 'prod-eu', 'eu_prod', 'prod1', 'prd', 'Live', 'us-east-1.production'])
    assert.ok(isProductionName(value), value);
  for (const value of ['preprod', 'nonprod', 'staging', 'product', 'development', 'test', 'prodlike'])
    assert.ok(!isProductionName(value), value);
  for (const name of [
    'NODE_ENV',
    'ENVIRONMENT',
    'APP_ENV',
    'RAILS_ENV',
    'RACK_ENV',
    'DEPLOY_ENV',
    'ASPNETCORE_ENVIRONMENT',
    'SPRING_PROFILES_ACTIVE',
  ]) {
    assert.equal(productionSignal({ [name]: 'prod-eu' }), `${name}=prod-eu`);
  }
  assert.equal(productionSignal({ ENV: '/srv/prod/.shrc', NODE_ENV: 'development' }), undefined);
});

test('the production guard on the MCP tools that inject faults, and the override', async () => {
  const saved = {
    ENVIRONMENT: process.env.ENVIRONMENT,
    FAULTLINE_ALLOW_PRODUCTION: process.env.FAULTLINE_ALLOW_PRODUCTION,
  };
  process.env.ENVIRONMENT = 'prod-eu';
  delete process.env.FAULTLINE_ALLOW_PRODUCTION;
  const guarded = await connectInMemory();
  const allowed = await connectInMemory(makeConfig({ allowProduction: true }));
  try {
    // Refused where each injects (the scenario's run, the proxy's start, the tool-call proxy); the tool adds the hint.
    for (const [name, args, what] of [
      ['fault_run_latency_impact_scenario', { url }, 'run a fault scenario'],
      ['fault_run_http_error_impact_scenario', { url }, 'run a fault scenario'],
      ['fault_proxy_start', { proxies: ['0=127.0.0.1:9'] }, 'start a fault proxy'],
      // Over HTTP: a command would first need the owner's consent (src/consent), asked before the plane starts.
      ['fault_run_tool_call_chaos_scenario', { url, calls: [{ tool: 'x' }] }, 'start a tool-call fault proxy'],
    ] as const) {
      const result = (await guarded.client.callTool({ name, arguments: args })) as CallToolResult;
      assert.equal(result.isError, true, name);
      assert.match(
        textOf(result),
        new RegExp(
          `^refused to ${what}: ENVIRONMENT=prod-eu says this is production; set FAULTLINE_ALLOW_PRODUCTION=1`,
        ),
      );
    }
    // Read-only tools are not fault injection.
    const exported = (await guarded.client.callTool({
      name: 'fault_export_scenario',
      arguments: { to: 'k6', fault: 'latency', url },
    })) as CallToolResult;
    assert.equal(exported.isError, undefined, textOf(exported));
    const run = (await allowed.client.callTool({
      name: 'fault_run_latency_impact_scenario',
      arguments: { url, duration: '200ms', latency: 1 },
    })) as CallToolResult;
    assert.equal(run.isError, undefined, textOf(run));
    process.env.FAULTLINE_ALLOW_PRODUCTION = '1';
    const byEnv = (await guarded.client.callTool({
      name: 'fault_proxy_start',
      arguments: { proxies: ['0=127.0.0.1:9'] },
    })) as CallToolResult;
    assert.equal(byEnv.isError, undefined, textOf(byEnv));
    await guarded.client.callTool({
      name: 'fault_proxy_stop',
      arguments: { id: (byEnv.structuredContent as { id: string }).id },
    });
  } finally {
    await guarded.close();
    await allowed.close();
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
});

test('the production guard on the commands that inject faults', async () => {
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [
      ['proxy', '--proxy', '0=127.0.0.1:9'],
      { RAILS_ENV: 'production' },
      /refused to start a fault proxy: RAILS_ENV=production says this is production; pass --allow-production/,
    ],
    [
      ['proxy', '--proxy', '0=127.0.0.1:9', '--admin', '0', '--admin-token', 't'],
      { NODE_ENV: 'PROD' },
      /refused to start a fault proxy: NODE_ENV=PROD/,
    ],
    [['run', 'latency', '--url', url], { APP_ENV: 'prod-eu' }, /refused to run a fault scenario: APP_ENV=prod-eu/],
    [
      ['toolcall', 'proxy', 'stdio', '--', process.execPath, '-e', ''],
      { DEPLOY_ENV: 'live' },
      /refused to start a tool-call fault proxy: DEPLOY_ENV=live/,
    ],
    [
      ['toolcall', 'proxy', 'http', '--upstream', url],
      { RACK_ENV: 'prd' },
      /refused to start a tool-call fault proxy: RACK_ENV=prd/,
    ],
  ];
  // Refused before anything starts: through main() in one child, not a process each.
  const outcomes = await runCliBatch(cases.map(([args, env]) => ({ args, env })));
  for (const [i, [args, , message]] of cases.entries()) {
    const outcome = outcomes[i]!;
    assert.equal(outcome.code, 2, `${args.join(' ')}: ${outcome.stderr}`);
    assert.match(outcome.stderr, message);
    assert.equal(outcome.stdout, '');
  }
  const line = await firstLines(
    ['proxy', '--proxy', '0=127.0.0.1:9', '--allow-production'],
    { ENVIRONMENT: 'prod-eu' },
    /targets: /,
  );
  assert.match(line, /targets: loopback only/);
});

/** The CLI's stderr once `until` matches it; the CLI is stopped then. */
async function firstLines(args: string[], env: Record<string, string>, until: RegExp): Promise<string> {
  const cli = startCliProcess(args, env);
  try {
    await cli.waitFor(until);
    return cli.stderr();
  } finally {
    await cli.stop();
  }
}
