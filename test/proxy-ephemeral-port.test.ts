/**
 * A mapping's port in use (the outside trial met EADDRINUSE twice on 34000-range ports with no
 * listener: an outgoing socket held them): the refusal hints at the ephemeral range when the port
 * is inside it, read from /proc, and says nothing more when it is not. Real listeners.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startProxy } from '../src/proxy/index.js';
import { ephemeralPortHint, ephemeralRange, freePort } from '../src/proxy/ephemeral-ports.js';
import { runCliProcess } from './helpers/processes.js';

async function listenOn(port: number): Promise<net.Server | undefined> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

test('a port in use inside the ephemeral range: the refusal says so and what to pick', async (t) => {
  const range = ephemeralRange();
  // Port 0 is answered from the ephemeral range itself: a port inside it, held by a real listener.
  const holder = (await listenOn(0))!;
  t.after(() => holder.close());
  const port = (holder.address() as AddressInfo).port;
  assert.ok(port >= range.low && port <= range.high, `${port} in ${range.low}-${range.high}`);
  await assert.rejects(startProxy({ mappings: [`${port}=127.0.0.1:9`] }), (error: Error) => {
    assert.match(error.message, /already in use \(EADDRINUSE\); port \d+ is in the system's ephemeral range/);
    assert.match(error.message, new RegExp(`pick a port below ${range.low}`));
    return true;
  });
  // The CLI door says the same, on stderr.
  const cli = await runCliProcess(['proxy', '--proxy', `${port}=127.0.0.1:9`], {});
  assert.notEqual(cli.code, 0);
  assert.match(cli.stderr, /ephemeral range .*pick a port below/);
});

test('a port in use below the range: no hint', async (t) => {
  let holder: net.Server | undefined;
  for (let port = 20_000 + Math.floor(Math.random() * 5000); !holder && port < 32_000; port += 97)
    holder = await listenOn(port);
  assert.ok(holder, 'a free port below the range to hold');
  t.after(() => holder!.close());
  const port = (holder!.address() as AddressInfo).port;
  await assert.rejects(startProxy({ mappings: [`${port}=127.0.0.1:9`] }), (error: Error) => {
    assert.match(error.message, /already in use \(EADDRINUSE\)$/);
    return true;
  });
});

test('the range is read from the file, with the usual one when it cannot be', () => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-range-'));
  try {
    const file = join(dir, 'ip_local_port_range');
    writeFileSync(file, '10000\t20000\n');
    const range = ephemeralRange(file);
    assert.deepEqual([range.low, range.high], [10000, 20000]);
    assert.equal(ephemeralPortHint(9999, range), '');
    assert.match(ephemeralPortHint(15000, range), /15000 is in the system's ephemeral range 10000–20000/);
    const missing = ephemeralRange(join(dir, 'absent'));
    assert.deepEqual([missing.low, missing.high], [32768, 60999]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('freePort picks a listenable port below the range, and the range itself where there is no room', async () => {
  const range = ephemeralRange();
  for (let i = 0; i < 5; i++) {
    const port = await freePort();
    assert.ok(port >= Math.max(1024, range.low - 10_000) && port < range.low, `${port} below ${range.low}`);
    const server = await listenOn(port);
    assert.ok(server, `${port} can be listened on`);
    await new Promise((resolve) => server!.close(resolve));
  }
  // No room below a range starting at 1500: the system's pick, wherever it is.
  const fallback = await freePort('127.0.0.1', { low: 1500, high: 65_000, source: 'test' });
  // Linux hands port 0 from the range read; other systems from their own (49152–65535).
  const system = process.platform === 'linux' ? range : { low: 1024, high: 65_535 };
  assert.ok(fallback >= system.low && fallback <= system.high, `${fallback} from the system's range`);
});
