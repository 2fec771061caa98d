/**
 * A real Prometheus (Debian's /usr/bin/prometheus) for the tests: started on a free loopback port
 * with a scrape config and a storage directory the test writes, scraping every second. Skipped
 * with a stated reason only when the binary is missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../fixtures/experiment/stack.js';

export const PROMETHEUS_BIN = process.env.FAULTLINE_TEST_PROMETHEUS ?? '/usr/bin/prometheus';

/** Why the Prometheus tests cannot run here, or undefined when they can. */
export function prometheusMissing(): string | undefined {
  return existsSync(PROMETHEUS_BIN)
    ? undefined
    : `${PROMETHEUS_BIN} is missing (Debian package prometheus; .ci/run installs it)`;
}

export interface ScrapeTarget {
  job: string;
  /** host:port */
  address: string;
  /** Sent as Authorization: Bearer (faultline's /metrics behind its token). */
  bearerToken?: string;
}

export interface RunningPrometheus {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startPrometheus(dir: string, targets: readonly ScrapeTarget[]): Promise<RunningPrometheus> {
  mkdirSync(join(dir, 'data'), { recursive: true });
  const port = await freePort();
  const jobs = targets.map((target) =>
    [
      `  - job_name: ${JSON.stringify(target.job)}`,
      '    scrape_interval: 1s',
      '    scrape_timeout: 900ms',
      ...(target.bearerToken
        ? ['    authorization:', '      type: Bearer', `      credentials: ${JSON.stringify(target.bearerToken)}`]
        : []),
      `    static_configs: [{targets: [${JSON.stringify(target.address)}]}]`,
    ].join('\n'),
  );
  const config = ['global:', '  scrape_interval: 1s', '  evaluation_interval: 1s', 'scrape_configs:', ...jobs].join(
    '\n',
  );
  writeFileSync(join(dir, 'prometheus.yml'), `${config}\n`);
  const child = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready within 60 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url, port, process: child, stop };
}

/** Waits until `query` answers at least one series (the targets have been scraped enough). */
export async function waitForSeries(url: string, query: string, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const answer = (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`).then(
      (response) => response.json(),
      () => undefined,
    )) as { data?: { result?: unknown[] } } | undefined;
    if ((answer?.data?.result?.length ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error(`no series for ${query} within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
