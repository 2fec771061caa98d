/**
 * Run inside `unshare -n -m` by test/target-rebinding.test.ts (never on the host): a rebinding DNS
 * server on 127.0.0.1:53 (each name answers 127.0.0.1 to its first A query, then 169.254.169.254,
 * TTL 0), a listener on 169.254.169.254 standing for the metadata service, and each door that
 * dials an agent-given URL driven through the MCP server as an agent would. Prints one JSON line:
 * per door, the connections the "metadata service" received and what the tool answered.
 */
import { createSocket } from 'node:dgram';
import { createServer, type Socket } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectInMemory, textOf } from './mcp.js';

export const METADATA_PORT = 18080;

/** A DNS answer for the query in `query`: A records of `ipv4` (none for other types). */
function answer(query: Buffer, ipv4: string | undefined): Buffer {
  let end = 12;
  while (query[end]! !== 0) end += query[end]! + 1;
  const question = query.subarray(12, end + 5);
  const type = query.readUInt16BE(end + 1);
  const records = type === 1 && ipv4 ? [ipv4] : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8180, 2); // a response, recursion available, NOERROR
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const answers = records.map((address) => {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(1, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(0, 6); // TTL 0: nothing may cache it
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, index) => record.writeUInt8(Number(octet), 12 + index));
    return record;
  });
  return Buffer.concat([header, question, ...answers]);
}

function nameOf(query: Buffer): string {
  const labels: string[] = [];
  for (let at = 12; query[at]! !== 0; at += query[at]! + 1)
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('latin1'));
  return labels.join('.').toLowerCase();
}

async function rebindingDns(): Promise<() => void> {
  const seen = new Set<string>();
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    const name = nameOf(query);
    const isA = query.readUInt16BE(12 + name.length + 2) === 1;
    const first = isA && !seen.has(name);
    if (isA) seen.add(name);
    const address = name.endsWith('.rebind.test') ? (first ? '127.0.0.1' : '169.254.169.254') : undefined;
    socket.send(answer(query, address), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(53, '127.0.0.1', resolve));
  return () => socket.close();
}

async function metadataService(): Promise<{ connections: () => number; close: () => void }> {
  let connections = 0;
  const server = createServer((socket: Socket) => {
    connections++;
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(METADATA_PORT, '169.254.169.254', resolve));
  return { connections: () => connections, close: () => server.close() };
}

async function main(): Promise<void> {
  const closeDns = await rebindingDns();
  const metadata = await metadataService();
  process.env.FAULTLINE_REBIND_TOKEN = 'rebind-token';
  const url = (name: string, path = '/mcp'): string => `http://${name}.rebind.test:${METADATA_PORT}${path}`;
  const calls: Record<string, { name: string; arguments: Record<string, unknown> }> = {
    'tool-call scenario url': {
      name: 'fault_run_tool_call_chaos_scenario',
      arguments: { url: url('tool'), calls: [{ tool: 'echo' }], tasks: 1 },
    },
    'experiment method[].toolcall.url': {
      name: 'fault_run_experiment',
      arguments: {
        experiment: {
          title: 'rebinding',
          duration: '1s',
          method: [{ at: '0s', toolcall: { url: url('step'), calls: [{ tool: 'echo' }], tasks: 1 } }],
        },
      },
    },
    'experiment control client': {
      name: 'fault_run_experiment',
      arguments: {
        experiment: {
          title: 'rebinding',
          duration: '1s',
          control: { plane: { url: url('control', ''), token_env: 'FAULTLINE_REBIND_TOKEN' } },
          method: [{ at: '0s', for: '1s', via: 'plane', fault: { target: 'x', type: 'latency', delay: 1 } }],
        },
      },
    },
  };
  const outcome: Record<string, { metadataConnections: number; isError: boolean; text: string }> = {};
  const { client, close } = await connectInMemory();
  try {
    for (const [door, call] of Object.entries(calls)) {
      const before = metadata.connections();
      const result = (await client.callTool(call, undefined, { timeout: 120_000 })) as CallToolResult;
      outcome[door] = {
        metadataConnections: metadata.connections() - before,
        isError: result.isError === true,
        text: textOf(result).slice(0, 2000),
      };
    }
  } finally {
    await close();
    metadata.close();
    closeDns();
  }
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
}

if (process.argv[2] === 'run') await main();
