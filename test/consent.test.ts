/**
 * Issue 36: no MCP call starts a program without its owner's consent. Every tool argument that can
 * start a process is tried, from the official SDK client against the built CLI over stdio, with a
 * server started with no flags (refused, naming the argument and --allow-commands, nothing run),
 * with --allow-commands, with --allow-command (that program only), and with a client that declares
 * elicitation (the person accepts, declines, never answers). Each door's program is `touch MARKER`
 * (or `mkdir MARKER` for "another program"), so whether it ran is whether the marker exists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, testSchemaValidator, textOf, type StdioClientOptions } from './helpers/mcp.js';
import { startCliProcess } from './helpers/processes.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'faultline-consent-')));
test.after(() => rmSync(dir, { recursive: true, force: true }));

let serial = 0;
function marker(): string {
  return join(dir, `marker-${++serial}`);
}

/** A door: a tool call whose argument `argument` starts `program marker`. */
interface Door {
  argument: RegExp;
  call(program: string, file: string): { name: string; arguments: Record<string, unknown> };
}

const experiment = (body: Record<string, unknown>) => ({
  name: 'fault_run_experiment',
  arguments: { experiment: { title: 'consent', duration: '300ms', ...body } },
});

const DOORS: Record<string, Door> = {
  'expect[].command': {
    argument: /expect\[0\]\.command/,
    call: (program, file) => experiment({ expect: [{ command: [program, file] }] }),
  },
  rollbacks: {
    argument: /rollbacks\[0\]\.command/,
    call: (program, file) => experiment({ rollbacks: [{ command: [program, file] }] }),
  },
  'method[].toolcall.command': {
    argument: /method\[0\]\.toolcall\.command/,
    call: (program, file) =>
      experiment({ method: [{ at: '0s', toolcall: { command: program, args: [file], calls: [{ tool: 'echo' }] } }] }),
  },
  'method[].probe.command': {
    argument: /method\[0\]\.probe\.command/,
    call: (program, file) => experiment({ method: [{ at: '0s', probe: { command: program, args: [file] } }] }),
  },
  'fault_probe_mcp_server command': {
    argument: /^command: /,
    call: (program, file) => ({
      name: 'fault_probe_mcp_server',
      arguments: { command: program, args: [file], call_timeout_ms: 500 },
    }),
  },
  'fault_run_tool_call_chaos_scenario command': {
    argument: /^command: /,
    call: (program, file) => ({
      name: 'fault_run_tool_call_chaos_scenario',
      arguments: { command: program, args: [file], calls: [{ tool: 'echo' }], tasks: 1 },
    }),
  },
};

/**
 * The person behind the file's shared elicitation client (ELICITING): each test that uses it sets
 * how the next elicitations are answered.
 */
let personNow: NonNullable<StdioClientOptions['elicit']> = async () => ({ action: 'cancel' });
const ELICITING: StdioClientOptions = { elicit: (message) => personNow(message) };

async function withServer(
  args: string[],
  run: (
    call: (door: Door, program: string, file?: string) => Promise<{ result: CallToolResult; ran: boolean }>,
  ) => Promise<void>,
  options: StdioClientOptions = {},
  env: Record<string, string> = {},
): Promise<void> {
  // A server serves every test that asks for the same flags, environment and client (no client
  // options, or ELICITING): each start is ~1 s of CPU, and what a test asserts is per call, not
  // per server.
  const share = Object.keys(options).length === 0 || options === ELICITING;
  const session = share ? await sharedServer(args, env, options) : await connectStdio(['mcp', ...args], env, options);
  try {
    await run(async (door, program, file = marker()) => {
      const request = door.call(program, file);
      const result = (await session.client.callTool(request, undefined, { timeout: 120_000 })) as CallToolResult;
      return { result, ran: existsSync(file) };
    });
  } finally {
    if (!share) await session.close();
  }
}

const shared = new Map<string, ReturnType<typeof connectStdio>>();
/** One server per set of flags, environment and client for the whole file, closed when the file ends. */
function sharedServer(
  args: string[],
  env: Record<string, string> = {},
  options: StdioClientOptions = {},
): ReturnType<typeof connectStdio> {
  const key = JSON.stringify([args, env, options === ELICITING]);
  let session = shared.get(key);
  if (!session) {
    session = connectStdio(['mcp', ...args], env, options);
    shared.set(key, session);
  }
  return session;
}
test.after(async () => {
  for (const session of shared.values()) await (await session).close();
});

/**
 * Planted in the environment of the file's --allow-commands server: a started command must get
 * none of them.
 */
const SECRETS = {
  FAULTLINE_ADMIN_TOKEN: 'admin-secret',
  OPENAI_API_KEY: 'sk-secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  SOMETHING_ELSE: 'other',
};

function assertRefused(name: string, door: Door, outcome: { result: CallToolResult; ran: boolean }, why: RegExp) {
  const text = textOf(outcome.result);
  assert.equal(outcome.result.isError, true, `${name}: refused, got ${text}`);
  assert.match(text, door.argument, `${name}: the refusal names the argument: ${text}`);
  assert.match(text, why, `${name}: ${text}`);
  assert.equal(outcome.ran, false, `${name}: nothing ran`);
}

test('with no flags, every argument that starts a program is refused, naming it and --allow-commands', async () => {
  await withServer([], async (call) => {
    for (const [name, door] of Object.entries(DOORS))
      assertRefused(name, door, await call(door, 'touch'), /not started.*--allow-commands/s);
  });
});

test('with --allow-commands, every door starts its program', async () => {
  await withServer(
    ['--allow-commands'],
    async (call) => {
      for (const [name, door] of Object.entries(DOORS)) {
        const outcome = await call(door, 'touch');
        assert.doesNotMatch(textOf(outcome.result), /not started/, name);
        assert.equal(outcome.ran, true, `${name}: ran (${textOf(outcome.result).slice(0, 300)})`);
      }
    },
    {},
    SECRETS,
  );
});

test('with --allow-command touch, touch starts through every door and mkdir is refused', async () => {
  await withServer(['--allow-command', 'touch'], async (call) => {
    for (const [name, door] of Object.entries(DOORS)) {
      const allowed = await call(door, 'touch');
      assert.equal(allowed.ran, true, `${name}: touch ran (${textOf(allowed.result).slice(0, 300)})`);
      assertRefused(name, door, await call(door, 'mkdir'), /--allow-command mkdir/);
    }
  });
});

test('an allowed program is started by its real path: a PATH in its env cannot swap it', async () => {
  await withServer(['--allow-command', 'touch'], async (call) => {
    const door: Door = {
      argument: /expect\[0\]\.command/,
      call: (program, file) => experiment({ expect: [{ command: [program, file], env: { PATH: dir } }] }),
    };
    assertRefused('env PATH', door, await call(door, 'touch'), /PATH/);
  });
});

/** A person who answers every elicitation with `action`, after seeing its message. */
function person(action: ElicitResult['action'], seen: string[]): StdioClientOptions {
  return {
    elicit: async (message) => {
      seen.push(message);
      return action === 'accept' ? { action, content: {} } : { action };
    },
  };
}

test('a client with elicitation: the person is asked, with argv and working directory; accept runs it', async () => {
  const seen: string[] = [];
  personNow = person('accept', seen).elicit!;
  await withServer(
    [],
    async (call) => {
      for (const [name, door] of Object.entries(DOORS)) {
        const outcome = await call(door, 'touch');
        assert.equal(outcome.ran, true, `${name}: ran after accept (${textOf(outcome.result).slice(0, 300)})`);
      }
    },
    ELICITING,
  );
  assert.equal(seen.length, Object.keys(DOORS).length, 'asked once per call');
  assert.match(seen[0]!, /\["touch","\/.*marker-\d+"\]/);
  assert.match(seen[0]!, / in \//);
});

test('a client with elicitation: decline refuses, and nothing runs', async () => {
  const seen: string[] = [];
  personNow = person('decline', seen).elicit!;
  await withServer(
    [],
    async (call) => {
      for (const [name, door] of Object.entries(DOORS))
        assertRefused(name, door, await call(door, 'touch'), /declined/);
    },
    ELICITING,
  );
  assert.equal(seen.length, Object.keys(DOORS).length, 'asked once per call');
});

test('a client with elicitation whose person never answers: refused after the consent timeout', async () => {
  const never: StdioClientOptions = { elicit: () => new Promise<ElicitResult>(() => undefined) };
  await withServer(
    ['--consent-timeout', '1'],
    async (call) => {
      for (const [name, door] of Object.entries(DOORS))
        assertRefused(name, door, await call(door, 'touch'), /no answer .* within 1 s/);
    },
    never,
  );
});

test("a started command gets none of the server's secrets, only a minimal environment", async () => {
  await withServer(
    ['--allow-commands'],
    async (call) => {
      const door: Door = {
        argument: /./,
        call: (_program, file) =>
          experiment({ expect: [{ command: ['/bin/sh', '-c', `env > '${file}'`], env: { ASKED: 'yes' } }] }),
      };
      const probeDoor: Door = {
        argument: /./,
        call: (_program, file) => ({
          name: 'fault_probe_mcp_server',
          arguments: { command: '/bin/sh', args: ['-c', `env > '${file}'`], call_timeout_ms: 500 },
        }),
      };
      for (const each of [door, probeDoor]) {
        const file = marker();
        const outcome = await call(each, 'unused', file);
        assert.equal(outcome.ran, true, textOf(outcome.result));
        const env = readFileSync(file, 'utf8');
        for (const name of Object.keys(SECRETS)) assert.doesNotMatch(env, new RegExp(`^${name}=`, 'm'), name);
        assert.match(env, /^PATH=/m);
        if (each === door) assert.match(env, /^ASKED=yes$/m);
      }
    },
    {},
    SECRETS,
  );
});

test("with roots set, a command's working directory must be inside them", async () => {
  const root = join(dir, 'root');
  mkdirSync(root);
  await withServer(['--allow-commands', '--root', root], async (call) => {
    const outside: Door = {
      argument: /expect\[0\]\.command/,
      call: (program, file) => experiment({ expect: [{ command: [program, file], cwd: '/' }] }),
    };
    assertRefused('cwd outside', outside, await call(outside, 'touch'), /outside the client's roots/);
    const inside: Door = {
      argument: /./,
      call: (_program, file) => experiment({ expect: [{ command: ['/bin/sh', '-c', `pwd > '${file}'`] }] }),
    };
    const file = marker();
    const outcome = await call(inside, 'unused', file);
    assert.equal(outcome.ran, true, textOf(outcome.result));
    assert.equal(readFileSync(file, 'utf8').trim(), root, 'no cwd: the first root');
  });
});

test('dry_run lists every command the experiment would start, and whether it may', async () => {
  const session = await sharedServer(['--allow-command', 'touch']);
  const file = marker();
  const result = (await session.client.callTool({
    name: 'fault_run_experiment',
    arguments: {
      dry_run: true,
      experiment: {
        title: 'plan',
        duration: '1s',
        expect: [{ command: ['touch', file] }],
        rollbacks: [{ command: ['mkdir', file] }],
      },
    },
  })) as CallToolResult;
  const text = textOf(result);
  assert.match(text, /starts expect\[0\]\.command: \["touch".*allowed by --allow-command/);
  assert.match(text, /starts rollbacks\[0\]\.command: \["mkdir".*REFUSED/);
  const commands = (result.structuredContent as { plan: { commands: Array<{ verdict: string }> } }).plan.commands;
  assert.deepEqual(
    commands.map((c) => c.verdict),
    ['allowed', 'refused'],
  );
  assert.equal(existsSync(file), false, 'a dry run starts nothing');
});

test('over streamable HTTP too: refused without consent, and asked through elicitation on the call', async () => {
  const token = 'consent-http-token';
  const server = startCliProcess(['mcp', '--transport', 'http', '--port', '0', '--token', token]);
  try {
    const url = new URL((await server.waitFor(/listening on (http:\/\/\S+)/))[1]!);
    const connect = async (elicit?: () => ElicitResult): Promise<Client> => {
      const client = new Client(
        { name: 'faultline-test', version: '0.0.0' },
        { ...(elicit ? { capabilities: { elicitation: {} } } : {}), jsonSchemaValidator: testSchemaValidator },
      );
      if (elicit) client.setRequestHandler(ElicitRequestSchema, () => elicit());
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      return client;
    };
    const plain = await connect();
    const asking = await connect(() => ({ action: 'accept', content: {} }));
    try {
      for (const [client, runs] of [
        [plain, false],
        [asking, true],
      ] as const) {
        const file = marker();
        const result = (await client.callTool(DOORS['expect[].command']!.call('touch', file))) as CallToolResult;
        assert.equal(existsSync(file), runs, textOf(result));
        if (!runs) assert.match(textOf(result), /expect\[0\]\.command: not started.*--allow-commands/s);
      }
    } finally {
      await plain.close();
      await asking.close();
    }
  } finally {
    await server.stop();
  }
});
