#!/usr/bin/env node
/**
 * The `faultline` binary (package.json's bin), CommonJS so that nothing starts the ES module
 * loader before it is needed. `faultline search …` runs from the plain search's bundle
 * (commands/plain-search-main.ts, written by `npm run build`) compiled with V8's code cache when
 * the bundle is there and current; everything else, and a search the bundle declines (not a plain
 * one), loads the ES entry cli.js first of all, which reserves stdout for MCP on stdio before
 * anything else loads. FAULTLINE_BUNDLE=off always takes the ES entry.
 */
import fs = require('node:fs');
import path = require('node:path');
import vm = require('node:vm');

interface BundleManifest {
  sha256: string;
  /** Compiled modules it holds, relative to this directory: none may be newer than the bundle. */
  modules: string[];
  /** package.json files (relative) and the version each had when it was bundled. */
  packages: Record<string, string>;
  /** better-sqlite3's compiled addon (relative), which the bundled JavaScript must match. */
  addon: string;
}

interface PlainSearchBundle {
  runPlainSearch(argv: readonly string[], addon: string): Promise<boolean>;
}

const BUNDLE = path.join(__dirname, 'plain-search.bundle.cjs');

function esEntry(): void {
  import('./cli.js').catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}

/** The manifest when the bundle is there and was built from the modules and packages found now. */
function currentManifest(): { manifest: BundleManifest; bundle: fs.Stats } | undefined {
  let manifest: BundleManifest;
  let bundle: fs.Stats;
  try {
    manifest = JSON.parse(fs.readFileSync(`${BUNDLE.slice(0, -'.cjs'.length)}.json`, 'utf8')) as BundleManifest;
    bundle = fs.statSync(BUNDLE);
    for (const module of manifest.modules) {
      if (fs.statSync(path.join(__dirname, module)).mtimeMs > bundle.mtimeMs) return undefined;
    }
    for (const [file, version] of Object.entries(manifest.packages)) {
      const found = JSON.parse(fs.readFileSync(path.join(__dirname, file), 'utf8')) as { version?: unknown };
      if (found.version !== version) return undefined;
    }
    if (!fs.existsSync(path.join(__dirname, manifest.addon))) return undefined;
  } catch {
    return undefined;
  }
  return { manifest, bundle };
}

/**
 * Where V8's code cache of this bundle lives: the data directory as config.ts's defaultDataDir
 * finds it, keyed by the bundle (its sha256 and size) and by Node's and V8's versions, so a cache
 * is never offered to another bundle or another V8 (V8 checks its own version and flags too).
 */
function cacheFile(manifest: BundleManifest, bundle: fs.Stats): string {
  const env = process.env;
  const data = env.FAULTLINE_DATA_DIR
    ? path.resolve(env.FAULTLINE_DATA_DIR)
    : path.join(
        env.XDG_DATA_HOME
          ? path.resolve(env.XDG_DATA_HOME)
          : path.join(require('node:os').homedir(), '.local', 'share'),
        'faultline',
      );
  const key = `${manifest.sha256.slice(0, 16)}-${bundle.size}-node${process.versions.node}-v8${process.versions.v8}`;
  return path.join(data, 'cache', 'start', `${key.replace(/[^\w.-]/g, '_')}.bin`);
}

/** Keeps only this cache in its directory (a new bundle or Node replaces the last one); best effort. */
function saveCache(file: string, data: Buffer): void {
  try {
    const dir = path.dirname(file);
    fs.mkdirSync(dir, { recursive: true });
    for (const old of fs.readdirSync(dir))
      if (old !== path.basename(file)) fs.rmSync(path.join(dir, old), { force: true });
    const partial = `${file}.${process.pid}.partial`;
    fs.writeFileSync(partial, data);
    fs.renameSync(partial, file);
  } catch {
    // A data directory that cannot be written costs the next search its compile time, nothing else.
  }
}

function runBundle(found: { manifest: BundleManifest; bundle: fs.Stats }): void {
  const cache = cacheFile(found.manifest, found.bundle);
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(cache);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(BUNDLE, 'utf8')}\n})`,
    {
      filename: BUNDLE,
      ...(cachedData ? { cachedData } : {}),
    },
  );
  const loaded = { exports: {} as PlainSearchBundle };
  (script.runInThisContext() as (...args: unknown[]) => void)(loaded.exports, require, loaded, BUNDLE, __dirname);
  loaded.exports.runPlainSearch(process.argv, path.join(__dirname, found.manifest.addon)).then(
    (ran) => {
      if (!ran) return esEntry();
      // Made after the run, the cache holds the functions the search compiled, not only the top level.
      if (!cachedData || script.cachedDataRejected) saveCache(cache, script.createCachedData());
    },
    (error: unknown) => {
      process.stderr.write(`faultline: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

const found =
  process.argv[2] === 'search' && !/^\s*off\s*$/i.test(process.env.FAULTLINE_BUNDLE ?? '')
    ? currentManifest()
    : undefined;
if (found) runBundle(found);
else esEntry();
