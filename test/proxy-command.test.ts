/** `faultline proxy`: flags → fault specs, and a run on loopback stopped by its signal. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registerProxyCommand, faultsFromOptions, runProxy, type ProxyCommandOptions } from '../src/commands/proxy.js';
import { FaultlineCommand } from '../src/commands/faultline-command.js';
import {
  connect,
  destroyAndWait,
  echo,
  handleCounts,
  readBytes,
  readToEnd,
  settledHandles,
  startServer,
} from './fixtures/proxy/net.js';

/** Parses `args` with the real command definition and returns its option values. */
function parse(args: string[]): ProxyCommandOptions {
  const program = new FaultlineCommand('faultline').exitOverride();
  registerProxyCommand(program);
  const command = program.commands.find((c) => c.name() === 'proxy')!;
  command.exitOverride().configureOutput({ writeErr: () => {} });
  command.action(() => {});
  program.parse(['proxy', ...args], { from: 'user' });
  return command.opts<ProxyCommandOptions>();
}

describe('faultline proxy flags', () => {
  it('turns flags into fault specs with their side and direction', () => {
    const options = parse([
      '--proxy',
      '0=127.0.0.1:1',
      '--proxy',
      '0=127.0.0.1:2',
      '--latency',
      '200',
      '--latency-deviation',
      '20',
      '--latency-distribution',
      'pareto',
      '--latency-per-op',
      '--latency-side',
      'client',
      '--jitter-amplitude',
      '30',
      '--jitter-frequency',
      '10',
      '--jitter-direction',
      'both',
      '--packet-loss',
      '0.02',
      '--packet-loss-model',
      'gilbert_elliott',
      '--packet-loss-rtt',
      '40',
      '--bandwidth',
      '64',
      '--bandwidth-unit',
      'kbps',
      '--bandwidth-scope',
      'shared',
      '--bandwidth-direction',
      'egress',
      '--blackhole',
      '--blackhole-side',
      'client',
      '--blackhole-direction',
      'egress',
    ]);
    assert.deepEqual(options.proxy, ['0=127.0.0.1:1', '0=127.0.0.1:2']);
    assert.deepEqual(faultsFromOptions(options), [
      { type: 'latency', latencyMs: 200, deviationMs: 20, distribution: 'pareto', perOp: true, side: 'client' },
      { type: 'jitter', amplitudeMs: 30, frequencyHz: 10, direction: 'both' },
      { type: 'packet_loss', lossRate: 0.02, model: 'gilbert_elliott', rttMs: 40 },
      { type: 'bandwidth', bytesPerSecond: 64_000, scope: 'shared', direction: 'egress' },
      { type: 'blackhole', side: 'client', direction: 'egress' },
    ]);
  });

  it("takes the connection faults' flags from their declarations", () => {
    const options = parse([
      '--stall',
      '0',
      '--stall-direction',
      'both',
      '--reset-peer',
      '50',
      '--slow-close',
      '20',
      '--slow-close-side',
      'client',
      '--slicer',
      '64',
      '--slicer-size-variation',
      '8',
      '--slicer-delay',
      '500',
      '--limit-data',
      '1000',
    ]);
    assert.deepEqual(faultsFromOptions(options), [
      { type: 'stall', timeoutMs: 0, direction: 'both' },
      { type: 'reset_peer', afterMs: 50 },
      { type: 'slow_close', delayMs: 20, side: 'client' },
      { type: 'slicer', averageSize: 64, sizeVariation: 8, delayUs: 500 },
      { type: 'limit_data', bytes: 1000 },
    ]);
    assert.throws(
      () => faultsFromOptions(parse(['--slicer-delay', '5'])),
      /--slicer-size-variation and --slicer-delay need --slicer <bytes>/,
    );
    assert.throws(() => faultsFromOptions(parse(['--slicer', '0'])), /slicer fault: averageSize must be/);
    assert.throws(() => parse(['--limit-data', '-1']), /--limit-data <bytes>.*expected a number ≥ 0/);
  });

  it('rejects bad values with a message naming the flag or field', () => {
    assert.throws(() => parse(['--latency', '-5']), /--latency <ms>.*expected a number ≥ 0/);
    assert.throws(() => parse(['--latency-side', 'middle']), /Allowed choices are client, server/);
    assert.throws(() => faultsFromOptions(parse(['--latency-deviation', '5'])), /need --latency <ms>/);
    assert.throws(
      () => faultsFromOptions(parse(['--packet-loss', '2'])),
      /packet_loss fault: lossRate must be a probability in 0\.\.1 \(got 2\)/,
    );
    assert.throws(() => faultsFromOptions(parse(['--bandwidth', '0'])), /bandwidth rate must be a number above 0/);
    assert.throws(
      () => faultsFromOptions(parse(['--bandwidth', '5', '--bandwidth-unit', 'kb'])),
      /unit "kb" is unknown/,
    );
  });
});

describe('faultline proxy run', () => {
  it('serves until its signal aborts, logging one line per event, then returns the counters', async () => {
    const baseline = handleCounts();
    const server = await startServer(echo);
    const lines: string[] = [];
    const stop = new AbortController();
    const running = runProxy(
      parse(['--proxy', `0=127.0.0.1:${server.port}`, '--latency', '20', '--seed', '7']),
      stop.signal,
      (line) => lines.push(line),
    );
    while (!lines.some((l) => l.startsWith('listening'))) await new Promise((resolve) => setTimeout(resolve, 5));
    const port = Number(/127\.0\.0\.1:(\d+) →/.exec(lines[0]!)![1]);
    const client = await connect(port);
    client.write('hi');
    assert.equal((await readBytes(client, 2)).toString(), 'hi');
    await destroyAndWait(client);
    while (!lines.some((l) => / closed after /.test(l))) await new Promise((resolve) => setTimeout(resolve, 5));
    stop.abort();
    const counters = await running;
    assert.equal(counters.mappings[0]!.connections, 1);
    assert.equal(counters.faults[0]!.applications, 1);
    assert.match(lines[1]!, /faults: latency; seed 7/);
    assert.ok(lines.some((l) => / open$/.test(l)));
    assert.equal(lines.at(-1), 'stopped');
    await server.close();
    assert.deepEqual(await settledHandles(baseline), baseline);
  });

  it('--limit-data passes that many bytes, then ends the stream', async () => {
    const server = await startServer(echo);
    const lines: string[] = [];
    const stop = new AbortController();
    const running = runProxy(
      parse(['--proxy', `0=127.0.0.1:${server.port}`, '--limit-data', '3']),
      stop.signal,
      (line) => lines.push(line),
    );
    while (!lines.some((l) => l.startsWith('listening'))) await new Promise((resolve) => setTimeout(resolve, 5));
    const port = Number(/127\.0\.0\.1:(\d+) →/.exec(lines[0]!)![1]);
    const client = await connect(port);
    client.write('hello');
    assert.equal((await readToEnd(client)).toString(), 'hel');
    await destroyAndWait(client);
    stop.abort();
    const counters = await running;
    assert.match(lines[1]!, /faults: limit_data; seed /);
    assert.equal(counters.faults[0]!.type, 'limit_data');
    await server.close();
  });
});
