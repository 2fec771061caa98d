/**
 * How the HTTP mapping frames what it forwards without a node:http client in between: the
 * response parser's reading of every framing (and its refusals), and, against raw upstreams,
 * upstreams that close after each response or send bodies ended by the close, and chunked
 * request bodies.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { HttpParseError, ResponseParser, type ResponseHead } from '../src/proxy/http/response-parser.js';
import { forEachPlacement } from './helpers/proxy-under-test.js';
import { handleCounts, settledHandles, startServer } from './fixtures/proxy/net.js';
import { RawClient, startUpstream } from './fixtures/http/upstream.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

interface Parsed {
  heads: ResponseHead[];
  bodies: string[];
  ends: number;
}

/** Feeds `text` to a parser in pieces of `size` bytes, one request of `method` per response. */
function parse(text: string, size: number, methods: string[] = ['GET'], close = false): Parsed {
  const parsed: Parsed = { heads: [], bodies: [], ends: 0 };
  const queue = [...methods];
  const parser = new ResponseParser({
    head: (head) => {
      parsed.heads.push(head);
      parsed.bodies.push('');
    },
    body: (chunk) => {
      parsed.bodies[parsed.bodies.length - 1] += chunk.toString('latin1');
    },
    end: () => {
      parsed.ends++;
      if (queue.length > 0) parser.expect(queue.shift()!);
    },
  });
  parser.expect(queue.shift()!);
  const bytes = Buffer.from(text, 'latin1');
  for (let at = 0; at < bytes.length; at += size) parser.feed(bytes.subarray(at, at + size));
  if (close) parser.finish();
  return parsed;
}

describe('HTTP response parser', () => {
  it('reads content-length, chunked (extensions, trailers), HEAD, 204 and interim 1xx, in any chunking', () => {
    const stream =
      'HTTP/1.1 100 Continue\r\n\r\n' +
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello' +
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n' +
      'HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n' +
      'HTTP/1.1 204 No Content\r\n\r\n';
    for (const size of [1, 2, 5, 13, stream.length]) {
      const parsed = parse(stream, size, ['GET', 'GET', 'HEAD', 'DELETE']);
      assert.deepEqual(
        parsed.heads.map((h) => h.status),
        [200, 200, 200, 204],
        `pieces of ${size}`,
      );
      assert.deepEqual(parsed.bodies, ['hello', 'abcde', '', '']);
      assert.equal(parsed.ends, 4);
      assert.deepEqual(parsed.heads[0]!.rawHeaders, ['Content-Length', '5', 'X-A', '1']);
      assert.ok(parsed.heads.every((h) => h.keepAlive));
    }
  });

  it('reads a body until the close, and says which connections cannot carry another request', () => {
    const untilClose = parse('HTTP/1.1 200 OK\r\n\r\nstreamed', 4, ['GET'], true);
    assert.deepEqual(untilClose.bodies, ['streamed']);
    assert.equal(untilClose.ends, 1);
    assert.equal(untilClose.heads[0]!.keepAlive, false);
    assert.equal(
      parse('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', 7).heads[0]!.keepAlive,
      false,
    );
    assert.equal(parse('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n', 7).heads[0]!.keepAlive, false);
    assert.equal(
      parse('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n', 7).heads[0]!.keepAlive,
      true,
    );
    const both = parse(
      'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n',
      5,
    );
    assert.deepEqual(both.bodies, ['x'], 'chunked wins over content-length');
    assert.equal(both.heads[0]!.keepAlive, false, 'and the connection is not trusted after');
  });

  it('refuses what would let an upstream desynchronise the stream', () => {
    for (const bad of [
      'HTTP/1.1 200 OK\r\nContent-Length: 1e2\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n',
      'HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n',
      'HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n',
      'ICY 200 OK\r\n\r\n',
      `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(70_000)}\r\n\r\n`,
    ]) {
      assert.throws(() => parse(bad, 4096), HttpParseError, JSON.stringify(bad.slice(0, 60)));
    }
    assert.throws(() => parse('HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc', 64, ['GET'], true), /mid-response/);
    assert.throws(() => parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nextra', 64, ['GET']), /no request asked/);
  });
});

/** A raw upstream: answers each request with `answer(n)` (n counts requests), then maybe closes. */
async function rawUpstream(answer: (n: number) => string, closeAfter: boolean) {
  let requests = 0;
  let connections = 0;
  const server = await startServer((socket) => {
    connections++;
    let buffered = '';
    socket.on('data', (data: Buffer) => {
      buffered += data.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
        socket.write(answer(++requests));
        if (closeAfter) socket.end();
      }
    });
  });
  return { server, stats: () => ({ requests, connections }) };
}

forEachPlacement((startProxy) => {
  describe('HTTP mapping framing against raw upstreams', () => {
    it('opens a new upstream connection after one that closes, and relays bodies ended by the close', async () => {
      const baseline = handleCounts();
      const closing = await rawUpstream(
        (n) => `HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nr${n}`,
        true,
      );
      const untilClose = await rawUpstream(
        (n) => `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nbody ${n} until close`,
        true,
      );
      const proxy = await startProxy({
        mappings: [`0=127.0.0.1:${closing.server.port}`, `0=127.0.0.1:${untilClose.server.port}`],
        http: true,
      });
      try {
        const client = await RawClient.connect(proxy.ports[0]!);
        for (const n of [1, 2, 3]) assert.equal((await client.request('GET', `/${n}`)).body.toString(), `r${n}`);
        assert.deepEqual(closing.stats(), { requests: 3, connections: 3 });
        assert.equal(client.closed, false, 'the client keeps its keep-alive connection');
        await client.close();

        const streamed = await RawClient.connect(proxy.ports[1]!);
        const first = await streamed.request('GET', '/a');
        assert.equal(first.body.toString(), 'body 1 until close');
        assert.equal((await streamed.request('GET', '/b')).body.toString(), 'body 2 until close');
        await streamed.close();
      } finally {
        await proxy.stop();
        await closing.server.close();
        await untilClose.server.close();
      }
      assert.deepEqual(await settledHandles(baseline), baseline);
    });

    it('after an upstream closes an idle keep-alive connection, the next request goes on a new one', {
      timeout: 20_000,
    }, async () => {
      // As node's own keep-alive timeout does: the response says nothing, the close comes later.
      let connections = 0;
      let firstClosed!: () => void;
      const closed = new Promise<void>((resolve) => (firstClosed = resolve));
      const server = await startServer((socket) => {
        if (++connections === 1) socket.once('close', () => firstClosed());
        socket.on('data', () => {
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
          setTimeout(() => socket.end(), 20);
        });
      });
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`], http: true });
      try {
        const client = await RawClient.connect(proxy.ports[0]!);
        assert.equal((await client.request('GET', '/1')).body.toString(), 'ok');
        // Once the proxy has closed its side too: a fixed wait lost the race on a loaded machine (the
        // FIN and the next request read in the same turn, the request written into the closing socket).
        await closed;
        const second = await client.request('GET', '/2');
        assert.equal(second.status, 200);
        assert.equal(connections, 2);
        await client.close();
      } finally {
        await proxy.stop();
        await server.close();
      }
    });

    it('a request answered before its body was sent: the rest of the body never reaches the upstream', async () => {
      // An upstream that refuses a POST from its head alone (a 413 or 401 before the body), keeping the connection.
      const received: string[] = [];
      const server = await startServer((socket) => {
        const index = received.push('') - 1;
        socket.on('data', (data: Buffer) => {
          received[index] += data.toString('latin1');
          const text = received[index]!;
          if (text.startsWith('POST') && text.includes('\r\n\r\n') && !text.includes('413 sent'))
            socket.write('HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n', () => {
              received[index] += '<413 sent>';
            });
          else if (text.endsWith('\r\n\r\n') && text.includes('GET /next'))
            socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        });
      });
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`], http: true });
      try {
        const socket = net.connect({ port: proxy.ports[0]!, host: '127.0.0.1' });
        await new Promise((resolve) => socket.once('connect', resolve));
        let answer = '';
        socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
        const until = async (done: () => boolean): Promise<void> => {
          while (!done()) await new Promise((resolve) => socket.once('data', resolve));
        };
        // The body's rest is bytes a client controls: sent on the upstream's connection after the 413, it would be
        // read there as a request of its own.
        const rest = 'GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
        const body = `start${rest}`;
        socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\nstart`);
        await until(() => answer.includes('\r\n\r\n'));
        assert.match(answer, /^HTTP\/1\.1 413 /);
        socket.write(rest);
        socket.write('GET /next HTTP/1.1\r\nHost: x\r\n\r\n');
        await until(() => answer.endsWith('ok'));
        socket.destroy();
        assert.ok(
          !received.join('').includes('/smuggled'),
          `the body's rest went upstream: ${JSON.stringify(received)}`,
        );
        assert.equal(received.length, 2, 'the next request on a connection of its own');
      } finally {
        await proxy.stop();
        await server.close();
      }
    });

    it('drops hop-by-hop headers and those Connection lists, both ways, and points Host at the remote', async () => {
      let head = '';
      const server = await startServer((socket) => {
        socket.on('data', (data: Buffer) => {
          head += data.toString('latin1');
          if (!head.includes('\r\n\r\n')) return;
          socket.write(
            'HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Up-Hop\r\nX-Up-Hop: 1\r\nKeep-Alive: timeout=5\r\n' +
              'X-Up-Kept: 2\r\nContent-Length: 2\r\n\r\nok',
          );
        });
      });
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`], http: true });
      try {
        const socket = net.connect({ port: proxy.ports[0]!, host: '127.0.0.1' });
        await new Promise((resolve) => socket.once('connect', resolve));
        let answer = '';
        socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
        socket.write(
          `GET /h HTTP/1.1\r\nHost: 127.0.0.1:${proxy.ports[0]}\r\nConnection: keep-alive, X-Client-Hop\r\n` +
            'X-Client-Hop: 1\r\nTE: trailers\r\nX-Client-Kept: 2\r\n\r\n',
        );
        while (!answer.endsWith('ok')) await new Promise((resolve) => socket.once('data', resolve));
        socket.destroy();
        const sent = head.toLowerCase();
        assert.match(sent, new RegExp(`\r\nhost: 127\\.0\\.0\\.1:${server.port}\r\n`), head);
        assert.match(sent, /\r\nx-client-kept: 2\r\n/, head);
        for (const dropped of ['x-client-hop', 'te:', 'connection: keep-alive, x-client-hop'])
          assert.ok(!sent.includes(dropped), `${dropped} reached the upstream: ${head}`);
        const got = answer.toLowerCase();
        assert.match(got, /\r\nx-up-kept: 2\r\n/, answer);
        for (const dropped of ['x-up-hop', 'keep-alive: timeout'])
          assert.ok(!got.includes(dropped), `${dropped} reached the client: ${answer}`);
      } finally {
        await proxy.stop();
        await server.close();
      }
    });

    it("sends a request's head with the body bytes read alongside it, in one write; a later body follows", async () => {
      const upstream = await startUpstream();
      // A delay of 0 on every chunk of the request link: its count is the number of writes towards the upstream.
      const chunks = { type: 'latency', latencyMs: 0, perOp: true, side: 'client', name: 'chunks' } as const;
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${upstream.port}`], http: true, faults: [chunks] });
      const written = async () =>
        (await proxy.counters()).faults.find((fault) => fault.name === 'chunks')!.applications;
      try {
        const client = await RawClient.connect(proxy.ports[0]!);
        const head = 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\n';
        client.socket.write(`${head}hello`);
        assert.equal((await client.read()).body.toString(), 'hello');
        assert.equal(await written(), 1, 'head and body in one write');
        // The head alone goes on at once: the upstream sees it before the body is sent.
        client.socket.write(head);
        for (const started = Date.now(); (await written()) < 2; ) {
          assert.ok(Date.now() - started < HANG_GUARD_MS, 'the head was held back waiting for the body');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        client.socket.write('later');
        assert.equal((await client.read()).body.toString(), 'later');
        assert.equal(await written(), 3);
        await client.close();
      } finally {
        await proxy.stop();
        await upstream.close();
      }
    });

    it('forwards a chunked request body whole', async () => {
      const upstream = await startUpstream();
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${upstream.port}`], http: true });
      try {
        const socket = net.connect({ port: proxy.ports[0]!, host: '127.0.0.1' });
        await new Promise((resolve) => socket.once('connect', resolve));
        let answer = '';
        socket.on('data', (data: Buffer) => (answer += data.toString()));
        socket.write(
          'POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n4\r\nabcd\r\n',
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
        socket.write('3\r\nefg\r\n0\r\n\r\n');
        await new Promise((resolve) => socket.once('close', resolve));
        assert.match(answer, /^HTTP\/1\.1 200/);
        assert.ok(answer.endsWith('abcdefg') || /\r\n7\r\nabcdefg\r\n0\r\n\r\n$/.test(answer), answer);
      } finally {
        await proxy.stop();
        await upstream.close();
      }
    });
  });
});
