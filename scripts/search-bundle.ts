/**
 * Writes the plain search's bundle (`npm run build`, after tsc): esbuild bundles the compiled
 * dist/src/commands/plain-search-main.js and everything it imports statically, better-sqlite3's
 * JavaScript included, into dist/src/plain-search.bundle.cjs, and records beside it
 * (plain-search.bundle.json) what cli-launch.cts checks before trusting it: the compiled modules it
 * was built from (none may be newer than the bundle), the version of each package it holds, where
 * better-sqlite3's addon is, and the bundle's sha256 (which keys its V8 code cache). A dynamic
 * import() stays one, of the compiled ES module, and is never reached: the bundle leaves searches
 * that would reach one (an LLM provider, Qdrant) to the ES entry (plain-search-main.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(repo, 'dist', 'src');
const bundleFile = join(out, 'plain-search.bundle.cjs');

/** `path` relative to the bundle's directory, '/'-separated, starting with `.`. */
function fromBundle(path: string): string {
  const rel = relative(out, path).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

const dynamicImportsStay: Plugin = {
  name: 'dynamic-imports-stay',
  setup(on) {
    on.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'dynamic-import'
        ? { path: fromBundle(resolve(args.resolveDir, args.path)), external: true }
        : undefined,
    );
  },
};

/**
 * `node:fs/promises` as the bundled modules use it, on fs's synchronous calls, each answered as a
 * settled promise. Node's module loads ten more (readline's interface, watchers, rimraf…), about
 * 9 M instructions of a ~150 M search; and each asynchronous call is a round trip through libuv's
 * thread pool (started for them alone), which a loaded machine makes slow, while a plain search
 * from the command line has nothing to do meanwhile. The same calls (realpath the native one, as
 * fs/promises' is), the same results and errors, as rejections. Names used only by modules the
 * bundle holds but a plain search never runs load the real module when first read.
 */
const FS_PROMISES_LITE = `
const fs = require('node:fs');
const settled = (call) => (...args) => {
  try {
    return Promise.resolve(call(...args));
  } catch (error) {
    return Promise.reject(error);
  }
};
let real;
const full = () => (real ??= require('node:fs/promises'));
module.exports = {
  realpath: settled(fs.realpathSync.native),
  readdir: settled(fs.readdirSync),
  readFile: settled(fs.readFileSync),
  stat: settled(fs.statSync),
  lstat: settled(fs.lstatSync),
  mkdir: settled(fs.mkdirSync),
  get open() { return full().open; },
  get writeFile() { return full().writeFile; },
  get rm() { return full().rm; },
  get rename() { return full().rename; },
  get access() { return full().access; },
};
`;

const fsPromisesLite: Plugin = {
  name: 'fs-promises-lite',
  setup(on) {
    on.onResolve({ filter: /^(node:)?fs\/promises$/ }, () => ({ path: 'fs-promises-lite', namespace: 'lite' }));
    on.onLoad({ filter: /.*/, namespace: 'lite' }, () => ({ contents: FS_PROMISES_LITE, loader: 'js' }));
  },
};

/** Every name a bundled module imports from node:fs/promises must be one FS_PROMISES_LITE has. */
function checkFsPromisesNames(bundle: string): void {
  const offered = new Set([...FS_PROMISES_LITE.matchAll(/^\s+(?:get )?(\w+)[:(]/gm)].map((match) => match[1]!));
  const lite = /var (import_promises\d*) = /g;
  for (const [, name] of bundle.matchAll(lite)) {
    for (const [, used] of bundle.matchAll(new RegExp(`${name}\\.(\\w+)`, 'g'))) {
      if (!offered.has(used!)) throw new Error(`the bundle uses fs/promises ${used}, which FS_PROMISES_LITE lacks`);
    }
  }
}

const result = await build({
  entryPoints: [join(out, 'commands', 'plain-search-main.js')],
  outfile: bundleFile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // The bundle runs as CommonJS: import.meta.url is the bundle's own URL (createRequire's base).
  define: { 'import.meta.url': '__bundle_url' },
  banner: { js: "const __bundle_url = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [dynamicImportsStay, fsPromisesLite],
  metafile: true,
  // Paths through a symlinked node_modules (a worktree's), not its target: the manifest names the
  // packages relative to the bundle, so a copy of the package finds them where Node does.
  preserveSymlinks: true,
  absWorkingDir: repo,
  logLevel: 'warning',
});

const inputs = Object.keys(result.metafile.inputs)
  .filter((input) => !input.startsWith('lite:'))
  .map((input) => resolve(repo, input));
const packages: Record<string, string> = {};
for (const input of inputs) {
  const match = /^(.*[\\/]node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(input);
  if (!match) continue;
  const manifest = join(match[1]!, 'package.json');
  packages[fromBundle(manifest)] = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}
const sqlite = inputs.find((input) => /[\\/]node_modules[\\/]better-sqlite3[\\/]/.test(input));
if (!sqlite) throw new Error('the plain search bundle holds no better-sqlite3');
const sqliteRoot = /^(.*[\\/]better-sqlite3)[\\/]/.exec(sqlite)![1]!;
const bundle = readFileSync(bundleFile);
checkFsPromisesNames(bundle.toString('utf8'));
writeFileSync(
  join(out, 'plain-search.bundle.json'),
  `${JSON.stringify(
    {
      sha256: createHash('sha256').update(bundle).digest('hex'),
      modules: inputs.filter((input) => !/[\\/]node_modules[\\/]/.test(input)).map(fromBundle),
      packages,
      addon: fromBundle(join(sqliteRoot, 'build', 'Release', 'better_sqlite3.node')),
    },
    null,
    2,
  )}\n`,
);
console.log(`plain search bundle: ${inputs.length} modules, ${bundle.length} bytes → ${bundleFile}`);
