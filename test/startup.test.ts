/**
 * Start-up budget: each command loads only what it uses, checked by which modules a fresh process
 * loads (a module-resolution hook records them). The times this buys, as ratios to a baseline
 * measured in the same run (`faultline --version` to `node -e 0`, `faultline mcp` to the one-tool
 * server on the same SDK), are bench/checks/startup.ts's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliPath, mcpTargetPath } from './helpers/repo.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

// The listing thread is part of what this file tests (test/helpers/isolate.ts turns it off for the rest of the suite).
process.env.FAULTLINE_LISTING_THREAD = 'on';

const HOOKS = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.startsWith('file:')) appendFileSync(process.env.FAULTLINE_TRACE_FILE, Date.now() + ' ' + result.url + '\\n');
  return result;
}`;

/**
 * The resolve hook sees ESM imports only; a module loaded with require() (commander, ajv's
 * dependencies) is recorded by wrapping the CommonJS resolver in the main thread.
 */
const CJS_TRACE = `
import { appendFileSync } from 'node:fs';
import Module from 'node:module';
import { pathToFileURL } from 'node:url';
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const file = resolveFilename.apply(this, args);
  if (file.startsWith('/')) appendFileSync(process.env.FAULTLINE_TRACE_FILE, Date.now() + ' ' + pathToFileURL(file).href + '\\n');
  return file;
};`;

/** An MCP client's opening: initialize, initialized, tools/list; then stdin closes. */
const TOOLS_LIST_SESSION = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'startup-test', version: '0' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
]
  .map((message) => `${JSON.stringify(message)}\n`)
  .join('');

/**
 * The file: URLs a fresh `faultline …args` process resolves, given `input` on stdin. The module
 * hooks see every thread's loads: a test of the main thread's start-up turns the listing thread
 * (src/code/listing-thread.ts, which loads tree-sitter on purpose) off.
 */
function modulesLoadedBy(args: string[], input = '', env: NodeJS.ProcessEnv = {}): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-startup-'));
  try {
    const hooks = join(dir, 'hooks.mjs');
    const register = join(dir, 'register.mjs');
    const trace = join(dir, 'trace.txt');
    writeFileSync(hooks, HOOKS);
    writeFileSync(
      register,
      `import { register } from ` +
        `'node:module';\nregister(${JSON.stringify(new URL(`file://${hooks}`).href)});\n${CJS_TRACE}`,
    );
    writeFileSync(trace, '');
    const run = spawnSync(process.execPath, ['--import', register, cliPath, ...args], {
      env: { ...process.env, ...env, FAULTLINE_TRACE_FILE: trace },
      encoding: 'utf8',
      input,
      // The start limit, not 30 s: a loaded machine's run was killed (status null) after it answered.
      timeout: HANG_GUARD_MS,
    });
    assert.equal(run.status, 0, run.stderr);
    if (input !== '') assert.match(run.stdout, /"id":2/, 'tools/list was not answered');
    const lines = readFileSync(trace, 'utf8')
      .split('\n')
      .filter(Boolean)
      // Each line is "<time> <url>".
      .map((line) => line.slice(line.indexOf(' ') + 1));
    return lines;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const packagesIn = (urls: string[]): Set<string> =>
  new Set(urls.flatMap((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.slice(1, 2) ?? []));

/** What every command shares (the program itself needs them), and cli.ts's plain-search test: not a command. */
const SHARED = ['commander', 'faultline-command', 'run-command', 'flags', 'parsers', 'plain-search'];

test('faultline --version loads no command and no dependency but commander', () => {
  const loaded = modulesLoadedBy(['--version']);
  assert.deepEqual([...packagesIn(loaded)], ['commander']);
  assert.ok(
    !loaded.some(
      (url) => url.includes('/src/commands/') && !SHARED.some((name) => url.endsWith(`/src/commands/${name}.js`)),
    ),
    loaded.join('\n'),
  );
});

test('faultline proxy loads the proxy, not the MCP SDK, zod or tree-sitter', () => {
  const loaded = modulesLoadedBy(['proxy', '--help']);
  const packages = packagesIn(loaded);
  for (const heavy of ['@modelcontextprotocol/sdk', 'zod', 'web-tree-sitter', 'openai', 'ollama', 'autocannon']) {
    assert.ok(!packages.has(heavy), `${heavy} was loaded: ${[...packages].join(', ')}`);
  }
  assert.ok(loaded.some((url) => url.endsWith('/src/commands/proxy.js')));
  assert.ok(!loaded.some((url) => url.endsWith('/src/commands/mcp.js')));
});

test('a tool-call proxy with a JSON plan loads no dependency but commander before it has relayed tools/list', () => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-startup-plan-'));
  try {
    const plan = join(dir, 'plan.json');
    writeFileSync(plan, JSON.stringify({ seed: 1, faults: [{ type: 'latency', tools: ['nothing'], added_ms: 1 }] }));
    const target = [process.execPath, mcpTargetPath, 'stdio'];
    const loaded = modulesLoadedBy(
      ['mcp-chaos', 'proxy', 'stdio', '--plan', plan, '--', ...target],
      TOOLS_LIST_SESSION,
    );
    // yaml reads YAML plans only; the MCP SDK and zod are the target's, not the relay's.
    assert.deepEqual([...packagesIn(loaded)], ['commander']);
    const commands = loaded.filter((url) => url.includes('/src/commands/')).map((url) => url.replace(/.*\//, ''));
    assert.deepEqual(
      [...new Set(commands)].filter((name) => !SHARED.includes(name.slice(0, -3))),
      ['toolcall.js'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'faultline mcp loads no tool module, no domain module and no ' + 'heavy dependency before it has answered tools/list',
  () => {
    const loaded = modulesLoadedBy(['mcp'], TOOLS_LIST_SESSION, { FAULTLINE_LISTING_THREAD: 'off' });
    const packages = packagesIn(loaded);
    // Tools load these on their first call (import() in the handlers), not at start-up.
    for (const heavy of [
      'diff',
      'web-tree-sitter',
      'better-sqlite3',
      'autocannon',
      'openai',
      'ollama',
      '@anthropic-ai/sdk',
      '@qdrant/js-client-rest',
      'yaml',
    ]) {
      assert.ok(!packages.has(heavy), `${heavy} was loaded: ${[...packages].join(', ')}`);
    }
    // zod, zod-to-json-schema and ajv (with its own dependencies) come with the SDK's server (the
    // one-tool server loads them too).
    assert.deepEqual([...packages].sort(), [
      '@modelcontextprotocol/sdk',
      'ajv',
      'ajv-formats',
      'commander',
      'fast-deep-equal',
      'fast-uri',
      'json-schema-traverse',
      'zod',
      'zod-to-json-schema',
    ]);
    // tools/list comes from the list generated at build time (src/tools/tool-list.ts): no tool
    // family's module (its zod schemas) loads before a call. A stale dist/src/tools/tool-list.json
    // makes the server register every family at start: run npm run build.
    const tools = loaded
      .filter((url) => url.includes('/dist/src/tools/'))
      .map((url) => url.replace(/.*\/dist\/src\/tools\//, ''));
    assert.deepEqual([...new Set(tools)].sort(), ['arguments.js', 'define.js', 'index.js', 'tool-list.js']);
    // Of the domain folders only the listing thread's host side (cli.ts starts the thread before the
    // server loads; off here, it starts nothing) and the source extensions FileAccess needs (a leaf).
    const domain = loaded.filter((url) =>
      /\/src\/(proxy|scenario|report|load|index|code|llm|probe|cloud|toolcall)\//.test(url),
    );
    assert.deepEqual(
      [...new Set(domain.map((url) => url.replace(/.*\/dist\/src\//, '')))],
      ['code/listing-thread.js', 'code/languages.js'],
    );
  },
);

test('faultline search loads no LLM provider, zod, tree-sitter, MCP SDK or commander when no provider is configured', () => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-startup-search-'));
  try {
    const tree = join(dir, 'app');
    mkdirSync(tree);
    writeFileSync(join(tree, 'server.py'), 'def handle_request(request):\n    return request\n');
    // Blank provider variables count as unset, whatever the machine running the tests has set.
    const env = {
      FAULTLINE_DATA_DIR: join(dir, 'data'),
      OPENAI_API_KEY: '',
      OPENROUTER_API_KEY: '',
      GEMINI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
      OLLAMA_HOST: '',
      OPENAI_BASE_URL: '',
      FAULT_LLM_BASE_URL: '',
      FAULT_AGENT_CLIENT: '',
    };
    const indexed = spawnSync(process.execPath, [cliPath, 'index', tree], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: HANG_GUARD_MS,
    });
    assert.equal(indexed.status, 0, indexed.stderr);
    const loaded = modulesLoadedBy(['search', 'handle_request', '--dir', tree], '', env);
    const packages = packagesIn(loaded);
    for (const heavy of [
      'zod',
      'openai',
      'ollama',
      '@anthropic-ai/sdk',
      'web-tree-sitter',
      '@modelcontextprotocol/sdk',
      '@qdrant/js-client-rest',
    ]) {
      assert.ok(!packages.has(heavy), `${heavy} was loaded: ${[...packages].join(', ')}`);
    }
    assert.ok(!loaded.some((url) => url.endsWith('/src/llm/select.js')), 'the providers were loaded');
    // A plain search (commands/plain-search.ts) goes without commander and the other commands.
    assert.ok(!packages.has('commander'), `commander was loaded: ${[...packages].join(', ')}`);
    assert.ok(!loaded.some((url) => url.endsWith('/src/main.js')), 'main.ts was loaded');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('faultline --help still lists every command', () => {
  const run = spawnSync(process.execPath, [cliPath, '--help'], { encoding: 'utf8', timeout: HANG_GUARD_MS });
  for (const name of ['mcp', 'agent', 'code', 'index', 'search', 'run', 'proxy', 'demo']) {
    assert.match(run.stdout, new RegExp(`^  ${name}\\b`, 'm'), `${name} missing from --help`);
  }
});
