/** Proxy building blocks without sockets: mappings, units, fault validation, random draws, stages. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InputError } from '../src/kernel/errors.js';
import { parseFaultConfig } from '../src/proxy/control/fault-config.js';
import {
  createRandom,
  linksOf,
  parseBandwidth,
  parseMapping,
  validateFault,
  validateFaults,
} from '../src/proxy/index.js';
import { bandwidthStage } from '../src/proxy/faults/bandwidth.js';
import { emptyCounters, type ChunkInfo, type TimedPiece } from '../src/proxy/faults/fault.js';
import { jitterStage, type ResolvedJitter } from '../src/proxy/faults/jitter.js';
import { latencySampler, type ResolvedLatency } from '../src/proxy/faults/latency.js';
import { lossModel, packetLossStage, SEGMENT_BYTES, type ResolvedPacketLoss } from '../src/proxy/faults/packet-loss.js';

const chunkAt = (arrival: number, extra: Partial<ChunkInfo> = {}): ChunkInfo => ({
  arrival,
  messageStart: true,
  now: arrival,
  followingBytes: 0,
  ...extra,
});

describe('parseMapping', () => {
  it('reads every accepted form', () => {
    assert.deepEqual(parseMapping('34000=example.com:443'), {
      text: '34000=example.com:443',
      listenHost: '127.0.0.1',
      listenPort: 34000,
      remoteHost: 'example.com',
      remotePort: 443,
      tls: true,
      servername: 'example.com',
    });
    assert.deepEqual(parseMapping('127.0.0.1:34000=api.local:80'), {
      text: '127.0.0.1:34000=api.local:80',
      listenHost: '127.0.0.1',
      listenPort: 34000,
      remoteHost: 'api.local',
      remotePort: 80,
      tls: false,
    });
    const ephemeral = parseMapping('0=127.0.0.1:8080');
    assert.equal(ephemeral.listenPort, 0);
    assert.equal(ephemeral.tls, false);
    const v6 = parseMapping('[::1]:0=[::1]:8080');
    assert.equal(v6.listenHost, '::1');
    assert.equal(v6.remoteHost, '::1');
    assert.equal(v6.remotePort, 8080);
    assert.equal(parseMapping('localhost:9000=db:5432').listenHost, 'localhost');
  });

  it('decides TLS from the remote scheme, or port 443 when there is none', () => {
    assert.equal(parseMapping('1=https://h:8443').tls, true);
    assert.equal(parseMapping('1=tls://h:5433').tls, true);
    assert.equal(parseMapping('1=tcp://h:443').tls, false);
    assert.equal(parseMapping('1=tcp://h:443').servername, undefined);
    assert.equal(parseMapping('1=http://h').remotePort, 80);
    const https = parseMapping('9090=https://www.example.com/');
    assert.equal(https.remotePort, 443);
    assert.equal(https.servername, 'www.example.com');
    assert.equal(parseMapping('1=127.0.0.1:443').servername, undefined, 'no SNI for an IP literal');
    assert.equal(parseMapping('1=127.0.0.1:443').tls, true);
  });

  it('rejects malformed mappings with the mapping quoted and the accepted forms listed', () => {
    for (const bad of [
      '34000',
      '=h:1',
      '1=',
      'abc=h:1',
      '70000=h:1',
      '1=h',
      '1=h:0',
      '1=ftp://h:21',
      '1=h:80/path',
      '1=[zz]:80',
      '1=tls://h',
    ]) {
      assert.throws(
        () => parseMapping(bad),
        (error: unknown) => {
          assert.ok(error instanceof InputError);
          assert.ok(error.message.includes(JSON.stringify(bad)), error.message);
          assert.match(error.message, /Accepted forms: PORT=HOST:PORT, ADDR:PORT=HOST:PORT, \[IPv6\]:PORT/);
          return true;
        },
      );
    }
  });
});

describe('parseBandwidth', () => {
  it('reads bytes by default and bits only for the bit/s units, case-insensitively', () => {
    assert.equal(parseBandwidth(500), 500);
    assert.equal(parseBandwidth(500, 'Bps'), 500);
    assert.equal(parseBandwidth(64, 'kbps'), 64_000, 'kbps means kilobytes per second');
    assert.equal(parseBandwidth(64, 'KBPS'), 64_000);
    assert.equal(parseBandwidth(10, 'mbps'), 10_000_000);
    assert.equal(parseBandwidth(1, 'gbps'), 1e9);
    assert.equal(parseBandwidth(8, 'bit/s'), 1);
    assert.equal(parseBandwidth(8, 'kbit/s'), 1000);
    assert.equal(parseBandwidth(8, 'Mbit/s'), 1e6);
    assert.equal(parseBandwidth(8, 'gbit/s'), 1e9);
  });

  it('rejects rate 0 and unknown units, listing the units', () => {
    assert.throws(() => parseBandwidth(0, 'kbps'), /rate must be a number above 0 \(got 0\).*kbps/);
    assert.throws(() => parseBandwidth(-1), /rate/);
    assert.throws(() => parseBandwidth(Number.NaN), /rate/);
    assert.throws(() => parseBandwidth(1e30, 'gbps'), /rate 1e\+30 gbps is above the largest cap, 1000 gbps/);
    assert.throws(
      () => parseBandwidth(5, 'kb/s'),
      /unit "kb\/s" is unknown; accepted units: bps, kbps, mbps, gbps, bit\/s, kbit\/s, mbit\/s, gbit\/s/,
    );
  });
});

describe('fault validation', () => {
  it('fills the defaults', () => {
    assert.deepEqual(validateFault({ type: 'latency', latencyMs: 100 }), {
      type: 'latency',
      name: 'latency',
      side: 'server',
      direction: 'ingress',
      latencyMs: 100,
      deviationMs: 0,
      distribution: 'normal',
      perOp: false,
    });
    assert.deepEqual(validateFault({ type: 'packet_loss' }), {
      type: 'packet_loss',
      name: 'packet_loss',
      side: 'server',
      direction: 'ingress',
      lossRate: 0.05,
      model: 'bernoulli',
      p: 0,
      r: 0,
      lossInBad: 1,
      lossInGood: 0,
      rttMs: 20,
    });
    const ge = validateFault({ type: 'packet_loss', model: 'gilbert_elliott', lossRate: 0.2 });
    assert.ok(ge.type === 'packet_loss');
    assert.equal(ge.r, 0.5);
    assert.ok(Math.abs(ge.p / (ge.p + ge.r) - 0.2) < 1e-12, 'steady-state loss equals lossRate');
    assert.equal(validateFault({ type: 'bandwidth', bytesPerSecond: 1 }).type, 'bandwidth');
  });

  it('accepts its own output again (setFaults re-validates resolved specs)', () => {
    for (const spec of [
      { type: 'latency', latencyMs: 5 },
      { type: 'jitter', amplitudeMs: 5, frequencyHz: 2 },
      { type: 'packet_loss' },
      { type: 'packet_loss', model: 'gilbert_elliott', lossRate: 0.1 },
      { type: 'bandwidth', bytesPerSecond: 1000 },
      { type: 'blackhole' },
    ]) {
      const resolved = validateFault(spec);
      assert.deepEqual(validateFault(resolved), resolved, spec.type);
    }
    assert.equal(validateFault({ type: 'blackhole', side: 'client', direction: 'both' }).name, 'blackhole');
  });

  it('names the field and what is accepted', () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { type: 'latency' },
        /latency fault: latencyMs must be a number of milliseconds in 0\.\.3600000 \(got nothing\)/,
      ],
      [{ type: 'latency', latencyMs: 10, deviationMs: -1 }, /deviationMs must be .* \(got -1\)/],
      [
        { type: 'latency', latencyMs: 10, distribution: 'gamma' },
        /distribution must be one of normal, uniform, pareto, pareto_normal \(got "gamma"\)/,
      ],
      [{ type: 'latency', latencyMs: 10, side: 'middle' }, /side must be one of client, server/],
      [{ type: 'latency', latencyMs: 10, direction: 'up' }, /direction must be one of ingress, egress, both/],
      [{ type: 'latency', latencyMs: 10, perOp: 'yes' }, /perOp must be true or false/],
      [{ type: 'latency', latency: 10 }, /latencyMs must be/],
      [{ type: 'latency', latencyMs: 10, deviation: 3 }, /unknown field "deviation" \(accepted: .*deviationMs/],
      [{ type: 'jitter', amplitudeMs: 10, frequencyHz: 0 }, /jitter fault: frequencyHz must be .*> 0/],
      [{ type: 'packet_loss', lossRate: 1.5 }, /lossRate must be a probability in 0\.\.1 \(got 1\.5\)/],
      [{ type: 'packet_loss', p: 0.1 }, /p must be left out unless model is gilbert_elliott/],
      [
        { type: 'bandwidth', bytesPerSecond: 0 },
        /bandwidth fault: bytesPerSecond must be a number of bytes per second above 0, at most 1000000000000 \(got 0\)/,
      ],
      [{ type: 'bandwidth', bytesPerSecond: 1e39 }, /at most 1000000000000 \(got 1e\+39\)/],
      [{ type: 'bandwidth', bytesPerSecond: 10, scope: 'global' }, /scope must be one of connection, shared/],
      [
        { type: 'slow' },
        /fault type must be one of latency, jitter, packet_loss, bandwidth, blackhole, stall, reset_peer, slow_close, slicer, limit_data \(got "slow"\)/,
      ],
      [null, /a fault must be an object/],
      // The connection faults, read through their declarations like the others.
      [{ type: 'stall' }, /stall fault: timeoutMs must be a number of milliseconds in 0\.\.3600000 \(got nothing\)/],
      [{ type: 'reset_peer', afterMs: -1 }, /reset_peer fault: afterMs must be a number of milliseconds/],
      [
        { type: 'slicer', averageSize: 0 },
        /slicer fault: averageSize must be a whole number of bytes in 1\.\.1073741824/,
      ],
      [
        { type: 'slicer', averageSize: 8, sizeVariation: 1.5 },
        /sizeVariation must be a whole number of bytes, 0 or more/,
      ],
      [
        { type: 'slicer', averageSize: 8, delayUs: 6e7 + 1 },
        /delayUs must be a number of microseconds in 0\.\.60000000/,
      ],
      [{ type: 'limit_data', bytes: 1.5 }, /limit_data fault: bytes must be a whole number of bytes, 0 or more/],
      [{ type: 'slow_close', delayMs: 10, delay: 3 }, /unknown field "delay"/],
    ];
    for (const [spec, message] of cases)
      assert.throws(
        () => validateFault(spec),
        (error: unknown) => error instanceof InputError && message.test(error.message),
      );
    assert.throws(
      () => validateFaults([{ type: 'blackhole' }, { type: 'blackhole' }]),
      /two faults are named "blackhole"/,
    );
    assert.equal(validateFaults([{ type: 'blackhole' }, { type: 'blackhole', name: 'second' }]).length, 2);
  });

  it('the admin reader takes the connection faults in every declared spelling', () => {
    const read = (config: Record<string, unknown>) =>
      parseFaultConfig(config).spec as unknown as Record<string, unknown>;
    assert.deepEqual(read({ type: 'reset-peer', after_ms: 5 }), { type: 'reset_peer', afterMs: 5 });
    assert.deepEqual(read({ type: 'slicer', average_size: 64, size_variation: 8, delay_us: 10 }), {
      type: 'slicer',
      averageSize: 64,
      sizeVariation: 8,
      delayUs: 10,
    });
    assert.equal(read({ type: 'stall', timeout_ms: 0 })['timeoutMs'], 0);
    assert.throws(() => parseFaultConfig({ type: 'limit-data' }), /config: limit_data fault: bytes must be/);
  });

  it('maps side and direction to links as docs/design.md "4. Network faults" says', () => {
    assert.deepEqual(linksOf('server', 'ingress'), ['downstream']);
    assert.deepEqual(linksOf('client', 'egress'), ['downstream']);
    assert.deepEqual(linksOf('server', 'egress'), ['upstream']);
    assert.deepEqual(linksOf('client', 'ingress'), ['upstream']);
    assert.deepEqual(linksOf('server', 'both'), ['upstream', 'downstream']);
  });
});

describe('seeded random source', () => {
  it('gives the same sequence for the same seed and label, another for another', () => {
    const draw = (seed: number, label: string) => Array.from({ length: 5 }, createRandom(seed, label).next);
    assert.deepEqual(draw(7, 'a'), draw(7, 'a'));
    assert.notDeepEqual(draw(7, 'a'), draw(8, 'a'));
    assert.notDeepEqual(draw(7, 'a'), draw(7, 'b'));
    for (const value of draw(1, 'x')) assert.ok(value >= 0 && value < 1);
  });

  it('latency samples have the requested mean and spread, truncated at 0', () => {
    const stats = (distribution: ResolvedLatency['distribution'], latencyMs: number, deviationMs: number) => {
      const spec: ResolvedLatency = {
        type: 'latency',
        name: 'l',
        side: 'server',
        direction: 'ingress',
        latencyMs,
        deviationMs,
        distribution,
        perOp: false,
      };
      const sample = latencySampler(spec, createRandom(42, distribution));
      const values = Array.from({ length: 20_000 }, sample);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
      return { mean, sd, min: Math.min(...values), max: Math.max(...values) };
    };
    const normal = stats('normal', 100, 20);
    assert.ok(Math.abs(normal.mean - 100) < 1, `normal mean ${normal.mean}`);
    assert.ok(Math.abs(normal.sd - 20) < 1, `normal sd ${normal.sd}`);
    const uniform = stats('uniform', 100, 30);
    assert.ok(uniform.min >= 70 && uniform.max <= 130);
    assert.ok(Math.abs(uniform.sd - 30 / Math.sqrt(3)) < 1, `uniform sd ${uniform.sd}`);
    const pareto = stats('pareto', 100, 20);
    assert.ok(Math.abs(pareto.mean - 100) < 2, `pareto mean ${pareto.mean}`);
    assert.ok(pareto.max - 100 > 3 * (100 - pareto.min), 'pareto has a long right tail');
    const paretoNormal = stats('pareto_normal', 100, 20);
    assert.ok(Math.abs(paretoNormal.mean - 100) < 1.5, `pareto_normal mean ${paretoNormal.mean}`);
    assert.ok(Math.abs(paretoNormal.sd - 20) < 3, `pareto_normal sd ${paretoNormal.sd}`);
    assert.equal(stats('normal', 5, 50).min, 0, 'negative samples become 0');
    assert.deepEqual(
      new Set(
        Array.from(
          { length: 10 },
          latencySampler(
            {
              type: 'latency',
              name: 'l',
              side: 'server',
              direction: 'ingress',
              latencyMs: 100,
              deviationMs: 0,
              distribution: 'pareto',
              perOp: false,
            },
            createRandom(1),
          ),
        ),
      ),
      new Set([100]),
    );
  });
});

describe('stages driven with synthetic times', () => {
  const piece = (bytes: number, at: number): TimedPiece[] => [{ data: Buffer.alloc(bytes), at }];

  it('jitter stays within [0, amplitude] and changes about frequency times a second', () => {
    const spec: ResolvedJitter = {
      type: 'jitter',
      name: 'j',
      side: 'server',
      direction: 'ingress',
      amplitudeMs: 40,
      frequencyHz: 10,
    };
    const counters = emptyCounters('j', 'jitter');
    const stage = jitterStage(spec, createRandom(3, 'jitter'), 0, counters);
    let changes = 0;
    let previous: number | undefined;
    for (let t = 0; t < 3000; t += 2) {
      const [out] = stage.shape(piece(10, t), chunkAt(t));
      const delay = out!.at - t;
      assert.ok(delay >= 0 && delay <= 40, `delay ${delay}`);
      if (previous !== undefined && delay !== previous) changes++;
      previous = delay;
    }
    // 30 windows in 3 s: 29 boundaries, each a change unless two draws coincide (never, with floats).
    assert.equal(changes, 29);
    assert.equal(counters.applications, 1500);
  });

  it('packet loss marks about lossRate of the segments, splits at each lost one and stalls it', () => {
    const spec: ResolvedPacketLoss = {
      type: 'packet_loss',
      name: 'pl',
      side: 'server',
      direction: 'ingress',
      lossRate: 0.05,
      model: 'bernoulli',
      p: 0,
      r: 0,
      lossInBad: 1,
      lossInGood: 0,
      rttMs: 10,
    };
    const counters = emptyCounters('pl', 'packet_loss');
    const stage = packetLossStage(spec, lossModel(spec, createRandom(11, 'pl')), counters);
    let bytesOut = 0;
    for (let i = 0; i < 500; i++) {
      const chunkBytes = 64 * 1024 + (i % 7) * 333; // chunk edges fall mid-segment
      const pieces = stage.shape(piece(chunkBytes, 0), chunkAt(0, { followingBytes: 64 * 1024 }));
      let at = 0;
      for (const p of pieces) {
        assert.ok(p.at >= at, 'pieces never move earlier than the ones before them');
        at = p.at;
        bytesOut += p.data.length;
      }
    }
    const expectedSegments = Math.ceil((bytesOut - 0) / SEGMENT_BYTES);
    // Retransmissions are transmissions too, so segments ≥ the stream's segments.
    assert.ok(
      counters.segments >= expectedSegments && counters.segments <= expectedSegments * 1.1,
      `${counters.segments} vs ${expectedSegments}`,
    );
    const rate = counters.segmentsLost / counters.segments;
    const sigma = Math.sqrt((0.05 * 0.95) / counters.segments);
    assert.ok(Math.abs(rate - 0.05) < 4 * sigma, `loss rate ${rate}`);
    assert.ok(counters.stallMs >= counters.applications * spec.rttMs, 'each loss stalls at least one RTT');
    assert.equal(bytesOut, 500 * 64 * 1024 + [...Array(500).keys()].reduce((a, i) => a + (i % 7) * 333, 0));
  });

  it('packet loss: a tail loss waits for the retransmission timeout, a loss with data behind it one RTT', () => {
    const spec: ResolvedPacketLoss = {
      type: 'packet_loss',
      name: 'pl',
      side: 'server',
      direction: 'ingress',
      lossRate: 1,
      model: 'bernoulli',
      p: 0,
      r: 0,
      lossInBad: 1,
      lossInGood: 0,
      rttMs: 10,
    };
    let first = true;
    const lostOnce = () => (first ? !(first = false) : false); // only the first transmission is lost
    const tail = emptyCounters('pl', 'packet_loss');
    const [out] = packetLossStage(spec, lostOnce, tail).shape(piece(100, 0), chunkAt(0));
    assert.equal(out!.at, 200 + 2 * 10, 'tail loss: 200 ms + 2·RTT');
    first = true;
    const fast = emptyCounters('pl', 'packet_loss');
    const pieces = packetLossStage(spec, lostOnce, fast).shape(piece(SEGMENT_BYTES * 5, 0), chunkAt(0));
    assert.equal(pieces.length, 1, 'the first segment is lost, so the whole chunk waits');
    assert.equal(pieces[0]!.at, 10, 'fast retransmit: one RTT');
    const repeated = emptyCounters('pl', 'packet_loss');
    let losses = 0;
    const lostTwice = () => ++losses <= 2;
    const [again] = packetLossStage(spec, lostTwice, repeated).shape(piece(100, 0), chunkAt(0));
    assert.equal(again!.at, 220 + 220, 'a lost retransmission adds the timeout again, doubling after');
    assert.equal(repeated.segmentsLost, 2);
    assert.equal(repeated.segments, 3);
  });

  it('bandwidth releases each slice when its last byte would have left at the rate', () => {
    const counters = emptyCounters('bw', 'bandwidth');
    const stage = bandwidthStage(
      {
        type: 'bandwidth',
        name: 'bw',
        side: 'server',
        direction: 'ingress',
        bytesPerSecond: 64_000,
        scope: 'connection',
      },
      { readyAt: 0 },
      counters,
    );
    const pieces = stage.shape(piece(64_000, 0), chunkAt(0));
    assert.equal(pieces.length, 50, '20 ms slices');
    assert.equal(pieces.at(-1)!.at, 1000);
    assert.equal(
      pieces.reduce((a, p) => a + p.data.length, 0),
      64_000,
    );
    const next = stage.shape(piece(1280, 500), chunkAt(500, { now: 990 }));
    assert.equal(next[0]!.at, 1020, 'the bucket carries its clock over chunks');
    assert.equal(counters.bytesPaced, 65_280);
  });
});
