#!/usr/bin/env node
// Refreshes the vendored tree-sitter grammars in grammars/ from the pinned npm grammar packages.
//
// Why vendored: the grammar packages carry C sources and native prebuilds for six platforms
// (~86 MB installed); we only need one .wasm each. So they are NOT dependencies: this script
// runs `npm pack NAME@VERSION` into a temporary directory, unpacks the tarball with `tar`, and
// copies the .wasm and the LICENSE (MIT: the notice must travel with the binary). It then
// rewrites grammars/manifest.json with package@version and the sha256 of every .wasm.
// Our own queries (grammars/<language>/definitions.scm) are hand-written and left untouched.
//
// Usage: npm run grammars            (refresh everything)
//        npm run grammars -- --check (verify the vendored files against the manifest only)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const grammarsDir = fileURLToPath(new URL('../grammars/', import.meta.url));

// One entry per grammar package. `wasm` maps the file in the package to the directory it is
// vendored into (tree-sitter-typescript ships two grammars: TypeScript and TSX); `wasmDir` is where
// the package keeps it, `license` its licence file when not LICENSE. A grammar whose own package
// ships no .wasm (Swift) is taken from a package of prebuilt ones (built from that grammar's npm
// release, which its package.json names), with the licence of the grammar itself (`licenseFrom`).
const PINNED = [
  { package: 'tree-sitter-python', version: '0.25.0', dir: 'python', wasm: ['tree-sitter-python.wasm'] },
  { package: 'tree-sitter-javascript', version: '0.25.0', dir: 'javascript', wasm: ['tree-sitter-javascript.wasm'] },
  {
    package: 'tree-sitter-typescript',
    version: '0.23.2',
    dir: 'typescript',
    wasm: ['tree-sitter-typescript.wasm', 'tree-sitter-tsx.wasm'],
  },
  { package: 'tree-sitter-go', version: '0.25.0', dir: 'go', wasm: ['tree-sitter-go.wasm'] },
  { package: 'tree-sitter-rust', version: '0.24.0', dir: 'rust', wasm: ['tree-sitter-rust.wasm'] },
  { package: 'tree-sitter-java', version: '0.23.5', dir: 'java', wasm: ['tree-sitter-java.wasm'] },
  { package: 'tree-sitter-ruby', version: '0.23.1', dir: 'ruby', wasm: ['tree-sitter-ruby.wasm'] },
  { package: 'tree-sitter-c', version: '0.24.1', dir: 'c', wasm: ['tree-sitter-c.wasm'] },
  { package: 'tree-sitter-cpp', version: '0.23.4', dir: 'cpp', wasm: ['tree-sitter-cpp.wasm'] },
  { package: 'tree-sitter-c-sharp', version: '0.23.5', dir: 'csharp', wasm: ['tree-sitter-c_sharp.wasm'] },
  { package: 'tree-sitter-php', version: '0.24.2', dir: 'php', wasm: ['tree-sitter-php.wasm'] },
  {
    package: '@tree-sitter-grammars/tree-sitter-kotlin',
    version: '1.1.0',
    dir: 'kotlin',
    wasm: ['tree-sitter-kotlin.wasm'],
  },
  {
    package: '@repomix/tree-sitter-wasms',
    version: '0.1.17',
    dir: 'swift',
    wasmDir: 'out',
    wasm: ['tree-sitter-swift.wasm'],
    licenseFrom: { package: 'tree-sitter-swift', version: '0.7.1', file: 'LICENSE' },
  },
  { package: 'tree-sitter-scala', version: '0.24.0', dir: 'scala', wasm: ['tree-sitter-scala.wasm'] },
  {
    package: '@tree-sitter-grammars/tree-sitter-lua',
    version: '0.4.1',
    dir: 'lua',
    wasm: ['tree-sitter-lua.wasm'],
    license: 'LICENSE.md',
  },
  { package: 'tree-sitter-elixir', version: '0.3.5', dir: 'elixir', wasm: ['tree-sitter-elixir.wasm'] },
  { package: 'tree-sitter-bash', version: '0.25.1', dir: 'bash', wasm: ['tree-sitter-bash.wasm'] },
];

const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

function check() {
  const manifest = JSON.parse(readFileSync(join(grammarsDir, 'manifest.json'), 'utf8'));
  let bad = 0;
  for (const entry of manifest.grammars) {
    for (const file of entry.files) {
      const actual = sha256(join(grammarsDir, entry.dir, file.name));
      if (actual !== file.sha256) {
        bad += 1;
        process.stderr.write(`MISMATCH ${entry.dir}/${file.name}: manifest ${file.sha256}, file ${actual}\n`);
      }
    }
  }
  process.stderr.write(bad === 0 ? 'all grammar files match the manifest\n' : `${bad} file(s) differ\n`);
  process.exitCode = bad === 0 ? 0 : 1;
}

/** `npm pack` of package@version unpacked under `into`: the package's directory. */
function unpack(name, version, into) {
  const spec = `${name}@${version}`;
  process.stderr.write(`fetching ${spec}\n`);
  mkdirSync(into, { recursive: true });
  const tarball = execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', into], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .pop();
  execFileSync('tar', ['xzf', join(into, tarball), '-C', into]);
  return join(into, 'package');
}

function refresh() {
  const work = mkdtempSync(join(tmpdir(), 'faultline-grammars-'));
  try {
    const grammars = [];
    for (const pin of PINNED) {
      const packageDir = unpack(pin.package, pin.version, join(work, pin.dir));
      const targetDir = join(grammarsDir, pin.dir);
      mkdirSync(targetDir, { recursive: true });
      const from = pin.licenseFrom;
      const licenseDir = from ? unpack(from.package, from.version, join(work, `${pin.dir}-license`)) : packageDir;
      copyFileSync(join(licenseDir, from?.file ?? pin.license ?? 'LICENSE'), join(targetDir, 'LICENSE'));
      const files = pin.wasm.map((name) => {
        copyFileSync(join(packageDir, pin.wasmDir ?? '', name), join(targetDir, name));
        return { name, sha256: sha256(join(targetDir, name)) };
      });
      grammars.push({
        dir: pin.dir,
        package: pin.package,
        version: pin.version,
        license: 'LICENSE',
        ...(from ? { licenseFrom: `${from.package}@${from.version}` } : {}),
        files,
      });
    }
    const manifest = {
      note: 'Written by scripts/refresh-grammars.mjs (npm run grammars). Do not edit by hand.',
      grammars,
    };
    writeFileSync(join(grammarsDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    process.stderr.write(`wrote ${join(grammarsDir, 'manifest.json')}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

mkdirSync(grammarsDir, { recursive: true });
if (process.argv.includes('--check')) check();
else refresh();
