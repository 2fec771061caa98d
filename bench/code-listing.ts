/**
 * Code listing against Universal Ctags, both measured in the same run on real code nobody here
 * wrote (zod and the Anthropic SDK from node_modules, the Python standard library, jQuery from
 * Debian), as users run faultline: the built CLI's MCP server over stdio, driven by the SDK client.
 *
 * Three figures, each printed beside its peer with the ratio and the target as a pass line:
 * - warm, never seen: one server, warmed up, lists a file at a new path holding content it has
 *   never seen (the real file plus one unique comment line), against `ctags --_interactive` given
 *   the same content on stdin in a running ctags process; the calls alternate, medians of each.
 *   Target: ≤ 3× ctags (the moonshot, 1.5×, is shown too).
 * - first call, listed before: a freshly spawned server's first tools/call, right after
 *   initialize (spawn and initialize are not counted, but shown), on a file an earlier server
 *   listed with the same data directory, so the definition store holds it. Target: ≤ 100 ms.
 *   Peer, for scale: the whole `ctags` process on the file.
 * - first call, never seen: the same with an empty data directory, against the whole `ctags`
 *   process on the file. Target: ≤ 10× ctags.
 * Fresh-process rounds interleave ctags, the never-seen server and the listed-before server;
 * medians. The CLI's whole process (`faultline code list FILE`, never seen and listed before) is
 * printed beside ctags for information. Exits 1 when a row misses its target, 2 when it cannot
 * measure (no ctags and none installable, no build).
 *
 * Universal Ctags is installed from Debian (`apt-get install -y universal-ctags`) when missing.
 *
 * Run: npm run build && node dist/bench/code-listing.js [--rounds N] [--calls N] [--only REGEXP]
 */
import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** One measured quantity. */
interface Figure {
  label: string;
  value: number;
  unit: string;
}

/** One pass line: our figure, its peer from the same run, and the target on the value or the ratio ours ÷ peer. */
interface Row {
  label: string;
  ours: Figure;
  peer?: Figure;
  target: { on: 'value' | 'ratio'; atMost: number };
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const cliPath = join(repoRoot, 'dist', 'src', 'cli.js');

interface Sample {
  label: string;
  path: string;
  /** How a line comment starts, for the unique line that makes content never seen. */
  comment: (text: string) => string;
}

const slashes = (text: string): string => `// ${text}`;
const hash = (text: string): string => `# ${text}`;

/** Real files, by size class. Those absent on this machine are skipped (and said so). */
const WARM_FILES: Sample[] = [
  { label: 'zod schemas.ts (TypeScript)', path: join(repoRoot, 'node_modules/zod/src/v4/classic/schemas.ts'), comment: slashes },
  { label: 'typing.py (Python)', path: '/usr/lib/python3.11/typing.py', comment: hash },
  { label: 'Anthropic SDK messages.ts (TypeScript)', path: join(repoRoot, 'node_modules/@anthropic-ai/sdk/src/resources/beta/messages/messages.ts'), comment: slashes },
  { label: 'jquery.js (JavaScript)', path: '/usr/share/javascript/jquery/jquery.js', comment: slashes },
];
const FIRST_CALL_FILES: Sample[] = [
  { label: 'zod core/parse.ts (TypeScript)', path: join(repoRoot, 'node_modules/zod/src/v4/core/parse.ts'), comment: slashes },
  { label: 'zod schemas.ts (TypeScript)', path: join(repoRoot, 'node_modules/zod/src/v4/classic/schemas.ts'), comment: slashes },
  { label: 'jquery.js (JavaScript)', path: '/usr/share/javascript/jquery/jquery.js', comment: slashes },
];

const WARM_RATIO = 3;
const WARM_MOONSHOT = 1.5;
const LISTED_BEFORE_MS = 100;
const NEVER_SEEN_RATIO = 10;

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}
const rounds = Number(option('--rounds', '7'));
const warmCalls = Number(option('--calls', '21'));
const only = new RegExp(option('--only', '.'), 'i');

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function lineCount(path: string): number {
  return readFileSync(path, 'utf8').split('\n').length - 1;
}

/** Universal Ctags' version line, installing it from Debian when it is missing. */
function ensureCtags(): string {
  const version = (): string | undefined => {
    const run = spawnSync('ctags', ['--version'], { encoding: 'utf8' });
    return run.status === 0 && run.stdout.includes('Universal Ctags') ? run.stdout.split('\n')[0] : undefined;
  };
  const found = version();
  if (found) return found;
  process.stderr.write('Universal Ctags is missing: apt-get install -y universal-ctags\n');
  spawnSync('apt-get', ['install', '-y', 'universal-ctags'], { stdio: 'inherit' });
  const installed = version();
  if (!installed) throw new Error('Universal Ctags is not installed and could not be installed (apt-get install -y universal-ctags)');
  return installed;
}

/** A running `ctags --_interactive`: each request hands it a file's content on stdin and waits for its tags. */
class InteractiveCtags {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffered = '';
  private waiting: ((tags: number) => void) | undefined;

  constructor() {
    this.child = spawn('ctags', ['--_interactive', '--fields=+n'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffered += chunk;
      if (!this.buffered.includes('"_type": "completed"')) return;
      const tags = this.buffered.split('"_type": "tag"').length - 1;
      this.buffered = '';
      this.waiting?.(tags);
    });
  }

  /** Milliseconds from sending `content` (as `name`, which picks the parser) to the last tag back. */
  async time(name: string, content: string): Promise<{ ms: number; tags: number }> {
    const bytes = Buffer.from(content, 'utf8');
    const started = performance.now();
    const done = new Promise<number>((resolve) => (this.waiting = resolve));
    this.child.stdin.write(`${JSON.stringify({ command: 'generate-tags', filename: name, size: bytes.length })}\n`);
    this.child.stdin.write(bytes);
    const tags = await done;
    return { ms: performance.now() - started, tags };
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

/** The whole `ctags` process on a file, tags to a pipe, wall time. */
function ctagsProcessMs(path: string): number {
  const started = performance.now();
  const run = spawnSync('ctags', ['-f', '-', '--fields=+n', path], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`ctags failed on ${path}: ${run.stderr}`);
  return ms;
}

/** The whole `faultline code list FILE` process, wall time; its output, to compare. */
function cliProcess(path: string, dataDir: string): { ms: number; output: string } {
  const started = performance.now();
  const run = spawnSync(process.execPath, [cliPath, 'code', 'list', path], { encoding: 'utf8', env: { ...process.env, FAULTLINE_DATA_DIR: dataDir }, maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`faultline code list ${path} failed: ${run.stderr}`);
  return { ms, output: run.stdout };
}

interface Server {
  client: Client;
  /** Spawn plus initialize. */
  startMs: number;
  close(): Promise<void>;
}

async function spawnServer(dataDir: string): Promise<Server> {
  const started = performance.now();
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp', '--toolsets', 'code'], env: { ...env, FAULTLINE_DATA_DIR: dataDir }, stderr: 'ignore' });
  const client = new Client({ name: 'faultline-bench-code-listing', version: '0.0.0' });
  await client.connect(transport);
  return { client, startMs: performance.now() - started, close: () => client.close() };
}

/** One fault_list_function_names call, timed; its structured answer, to compare. */
async function listThroughMcp(server: Server, path: string): Promise<{ ms: number; result: unknown }> {
  const started = performance.now();
  const result = await server.client.callTool({ name: 'fault_list_function_names', arguments: { file: path } });
  const ms = performance.now() - started;
  if (result.isError) throw new Error(`fault_list_function_names ${path}: ${JSON.stringify(result.content)}`);
  return { ms, result: result.structuredContent };
}

/** Waits (≤ 5 s) until a data directory's definition store holds an entry: the server writes after it answers. */
async function storeWritten(dataDir: string): Promise<void> {
  const store = join(dataDir, 'cache', 'definitions');
  const deadline = Date.now() + 5000;
  const entries = (): number => (existsSync(store) ? readdirSync(store).reduce((sum, shard) => sum + readdirSync(join(store, shard)).filter((name) => name.endsWith('.json')).length, 0) : 0);
  while (entries() === 0) {
    if (Date.now() > deadline) throw new Error(`no definition store entry was written under ${store}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const fmt = (value: number): string => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

async function warmRows(scratch: string, ctags: InteractiveCtags, log: (line: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  const dataDir = mkdtempSync(join(scratch, 'warm-data-'));
  const server = await spawnServer(dataDir);
  try {
    let variant = 0;
    const newFile = (sample: Sample, text: string): { path: string; content: string } => {
      variant++;
      const content = `${text}${text.endsWith('\n') ? '' : '\n'}${sample.comment(`never seen ${variant}`)}\n`;
      const path = join(scratch, `warm-${variant}${extname(sample.path)}`);
      writeFileSync(path, content);
      return { path, content };
    };
    for (const sample of WARM_FILES.filter((file) => only.test(file.label))) {
      if (!existsSync(sample.path)) {
        log(`skipped (absent): ${sample.path}`);
        continue;
      }
      const text = readFileSync(sample.path, 'utf8');
      // Warm-up: the grammar loaded and V8's code optimised, as in a server that has answered before.
      for (let i = 0; i < 5; i++) {
        const { path, content } = newFile(sample, text);
        await listThroughMcp(server, path);
        await ctags.time(basename(sample.path), content);
      }
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let i = 0; i < warmCalls; i++) {
        const { path, content } = newFile(sample, text);
        // Alternate which goes first, so neither always follows the other's disturbance.
        if (i % 2 === 0) {
          ours.push((await listThroughMcp(server, path)).ms);
          theirs.push((await ctags.time(basename(sample.path), content)).ms);
        } else {
          theirs.push((await ctags.time(basename(sample.path), content)).ms);
          ours.push((await listThroughMcp(server, path)).ms);
        }
        rmSync(path);
      }
      const label = `warm, never seen: ${sample.label}, ${lineCount(sample.path).toLocaleString('en-US')} lines`;
      rows.push({
        label,
        ours: { label: 'faultline MCP list', value: median(ours), unit: 'ms' },
        peer: { label: 'ctags --_interactive', value: median(theirs), unit: 'ms' },
        target: { on: 'ratio', atMost: WARM_RATIO },
      });
      log(`${label}: ours ${ours.map(fmt).join(' ')}; ctags ${theirs.map(fmt).join(' ')}`);
    }
  } finally {
    await server.close();
  }
  return rows;
}

async function firstCallRows(scratch: string, log: (line: string) => void): Promise<{ rows: Row[]; notes: string[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const sample of FIRST_CALL_FILES.filter((file) => only.test(file.label))) {
    if (!existsSync(sample.path)) {
      log(`skipped (absent): ${sample.path}`);
      continue;
    }
    const runs = { ctags: [] as number[], neverSeen: [] as number[], listedBefore: [] as number[], start: [] as number[], cliNeverSeen: [] as number[], cliListedBefore: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      runs.ctags.push(ctagsProcessMs(sample.path));
      // A data directory of this round's own: empty, so the first server has never seen the file.
      const dataDir = mkdtempSync(join(scratch, 'first-data-'));
      const first = await spawnServer(dataDir);
      let answer: unknown;
      try {
        const call = await listThroughMcp(first, sample.path);
        runs.neverSeen.push(call.ms);
        runs.start.push(first.startMs);
        answer = call.result;
        await storeWritten(dataDir);
      } finally {
        await first.close();
      }
      const second = await spawnServer(dataDir);
      try {
        const call = await listThroughMcp(second, sample.path);
        runs.listedBefore.push(call.ms);
        // The stored answer must be the parsed one, or the figure would mean nothing.
        if (JSON.stringify(call.result) !== JSON.stringify(answer)) throw new Error(`the listed-before answer differs from the parsed one on ${sample.path}`);
      } finally {
        await second.close();
      }
      const cliDataDir = mkdtempSync(join(scratch, 'cli-data-'));
      const cliFirst = cliProcess(sample.path, cliDataDir);
      const cliAgain = cliProcess(sample.path, cliDataDir);
      runs.cliNeverSeen.push(cliFirst.ms);
      runs.cliListedBefore.push(cliAgain.ms);
      if (cliFirst.output !== cliAgain.output) throw new Error(`faultline code list printed something else from the store on ${sample.path}`);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(cliDataDir, { recursive: true, force: true });
    }
    const label = `${sample.label}, ${lineCount(sample.path).toLocaleString('en-US')} lines`;
    const ctagsFigure: Figure = { label: 'ctags process', value: median(runs.ctags), unit: 'ms' };
    rows.push({
      label: `first call, listed before: ${label}`,
      ours: { label: 'fresh MCP server, 1st call', value: median(runs.listedBefore), unit: 'ms' },
      peer: ctagsFigure,
      target: { on: 'value', atMost: LISTED_BEFORE_MS },
    });
    rows.push({
      label: `first call, never seen: ${label}`,
      ours: { label: 'fresh MCP server, 1st call', value: median(runs.neverSeen), unit: 'ms' },
      peer: ctagsFigure,
      target: { on: 'ratio', atMost: NEVER_SEEN_RATIO },
    });
    notes.push(
      `${label}: MCP spawn+initialize ${fmt(median(runs.start))} ms (not counted above); whole CLI process \`faultline code list\`: ` +
        `never seen ${fmt(median(runs.cliNeverSeen))} ms (${(median(runs.cliNeverSeen) / ctagsFigure.value).toFixed(1)}× ctags), ` +
        `listed before ${fmt(median(runs.cliListedBefore))} ms (${(median(runs.cliListedBefore) / ctagsFigure.value).toFixed(1)}× ctags)`,
    );
    log(`${label}: never seen ${runs.neverSeen.map(fmt).join(' ')}; listed before ${runs.listedBefore.map(fmt).join(' ')}; ctags ${runs.ctags.map(fmt).join(' ')}`);
  }
  return { rows, notes };
}

function ratioOf(row: Row): number | undefined {
  return row.peer ? row.ours.value / row.peer.value : undefined;
}

function meets(row: Row): boolean {
  const value = row.target.on === 'value' ? row.ours.value : ratioOf(row);
  return value !== undefined && Number.isFinite(value) && value <= row.target.atMost;
}

function printRows(rows: Row[]): void {
  const cells = rows.map((row) => {
    const ratio = ratioOf(row);
    return [
      meets(row) ? 'PASS' : 'MISS',
      row.label,
      `${fmt(row.ours.value)} ${row.ours.unit}`,
      row.peer ? `vs ${row.peer.label} ${fmt(row.peer.value)} ${row.peer.unit}` : '',
      ratio === undefined ? '' : `${ratio.toFixed(2)}×`,
      `target ${row.target.on === 'ratio' ? `≤ ${row.target.atMost}×` : `≤ ${row.target.atMost} ${row.ours.unit}`}` +
        (row.target.on === 'ratio' && row.target.atMost === WARM_RATIO && ratio !== undefined ? ` (moonshot ≤ ${WARM_MOONSHOT}×: ${ratio <= WARM_MOONSHOT ? 'met' : 'not met'})` : ''),
    ];
  });
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((line) => line[column]!.length)));
  for (const line of cells) process.stdout.write(`  ${line.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}\n`);
}

async function main(): Promise<number> {
  if (!existsSync(cliPath)) {
    process.stderr.write(`no build at ${cliPath}: run npm run build first\n`);
    return 2;
  }
  let ctagsVersion: string;
  try {
    ctagsVersion = ensureCtags();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  const log = (line: string): void => void process.stderr.write(`  code-listing: ${line}\n`);
  const loadBefore = loadavg()[0]!;
  const scratch = mkdtempSync(join(tmpdir(), 'faultline-bench-code-listing-'));
  const ctags = new InteractiveCtags();
  let rows: Row[];
  let notes: string[];
  try {
    rows = await warmRows(scratch, ctags, log);
    const first = await firstCallRows(scratch, log);
    rows.push(...first.rows);
    notes = first.notes;
  } finally {
    ctags.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  process.stdout.write(
    `code listing vs ${ctagsVersion}, node ${process.version}, ${warmCalls} warm calls and ${rounds} fresh-process rounds per file (medians), ` +
      `load average ${loadBefore.toFixed(1)} → ${loadavg()[0]!.toFixed(1)} (${execFileSync('nproc', { encoding: 'utf8' }).trim()} cores)\n`,
  );
  printRows(rows);
  for (const note of notes) process.stdout.write(`  note: ${note}\n`);
  return rows.every(meets) ? 0 : 1;
}

process.exitCode = await main();
