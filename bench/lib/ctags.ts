/**
 * Universal Ctags as a peer for the code-listing checks: installed from Debian when missing, run
 * as a whole process on a file or kept running in `--_interactive` mode, where each request hands
 * it a file's content on stdin (the in-process peer of a warm listing).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** Universal Ctags' version line, installing it from Debian (`apt-get install -y universal-ctags`) when it is missing.
 * */
export function ensureCtags(log: (line: string) => void): string {
  const version = (): string | undefined => {
    const run = spawnSync('ctags', ['--version'], { encoding: 'utf8' });
    return run.status === 0 && run.stdout.includes('Universal Ctags') ? run.stdout.split('\n')[0] : undefined;
  };
  const found = version();
  if (found) return found;
  log('Universal Ctags is missing: apt-get install -y universal-ctags');
  spawnSync('apt-get', ['install', '-y', 'universal-ctags'], { stdio: 'ignore', timeout: 300_000 });
  const installed = version();
  if (!installed)
    throw new Error('Universal Ctags is not installed and could not be installed (apt-get install -y universal-ctags)');
  return installed;
}

/** A running `ctags --_interactive`: each request hands it a file's content and waits for its last tag. */
export class InteractiveCtags {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffered = '';
  private waiting: { resolve: (tags: number) => void; reject: (error: Error) => void } | undefined;

  constructor() {
    this.child = spawn('ctags', ['--_interactive', '--fields=+n'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffered += chunk;
      if (!this.buffered.includes('"_type": "completed"')) return;
      const tags = this.buffered.split('"_type": "tag"').length - 1;
      this.buffered = '';
      this.waiting?.resolve(tags);
    });
    this.child.on('error', (error) => this.waiting?.reject(error));
    this.child.on('exit', () => this.waiting?.reject(new Error('ctags --_interactive exited')));
  }

  /** Milliseconds from sending `content` (as `name`, whose extension picks the parser) to its last tag; and how many
   * tags. */
  async time(name: string, content: string): Promise<{ ms: number; tags: number }> {
    const bytes = Buffer.from(content, 'utf8');
    const done = new Promise<number>((resolve, reject) => (this.waiting = { resolve, reject }));
    const started = performance.now();
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

/** The whole `ctags` process on a file, tags to a pipe: wall time in ms. */
export function ctagsProcessMs(path: string): number {
  const started = performance.now();
  const run = spawnSync('ctags', ['-f', '-', '--fields=+n', path], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60_000,
  });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`ctags failed on ${path}: ${run.stderr}`);
  return ms;
}
