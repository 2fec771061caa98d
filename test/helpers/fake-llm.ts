/**
 * A local HTTP server that speaks just enough of three LLM APIs for tests, through the real
 * `openai`, `ollama` and `@anthropic-ai/sdk` clients:
 *
 *   OpenAI     POST /v1/chat/completions   POST /v1/embeddings
 *   Ollama     POST /api/chat              POST /api/embed
 *   Anthropic  POST /v1/messages           (no embeddings: Anthropic has none)
 *
 * Chat replies are scripted per test as a queue (shared by both APIs); each entry is the reply
 * text or a step with a status, a delay or a dropped connection. An empty queue answers HTTP 500
 * "no scripted reply", so a test that makes an unexpected call fails loudly. Embeddings are
 * deterministic by default (a hash of the text spread over `embedDim` floats), so an indexer
 * test can embed anything without scripting; they can be scripted too. Every request is recorded.
 *
 * Binds 127.0.0.1 on an ephemeral port; close() ends open connections and pending timers.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeStep {
  /** Reply text (the assistant message content). */
  content?: string;
  /** HTTP status; with a status ≥ 400 the body is an API error object. */
  status?: number;
  /** Extra response headers (e.g. retry-after). */
  headers?: Record<string, string>;
  /** Wait this long before answering (the timer is cleared if the client goes away). */
  delayMs?: number;
  /** Destroy the socket instead of answering (a network error for the client). */
  drop?: boolean;
  /** For embeddings: the vectors to return. */
  vectors?: number[][];
  /** The whole JSON response body, sent as is (malformed replies: no choices, object content…). */
  body?: unknown;
  /** The response body sent verbatim, with `status` or 200 (an empty body, HTML, truncated JSON, a proxy's error page).
   * */
  rawBody?: string;
  /** Stream this many bytes of a JSON string, chunked with no content-length (an oversized reply). */
  streamBytes?: number;
  /** Anthropic: answer with a tool_use block carrying this input (structured output). */
  toolInput?: unknown;
}

export type FakeReply = string | FakeStep;

export interface RecordedRequest {
  api: Api;
  kind: 'chat' | 'embed';
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** True when the client went away before the (delayed) reply was sent. */
  abandoned: boolean;
}

export interface FakeLlmOptions {
  chat?: FakeReply[];
  /** Scripted embedding replies; when empty, deterministic vectors are computed. */
  embed?: FakeReply[];
  /** Dimension of the computed embeddings (default 8). */
  embedDim?: number;
}

export interface FakeLlm {
  /** Base URL for the openai client (ends in /v1). */
  openaiBaseUrl: string;
  /** Host for the ollama client. */
  ollamaHost: string;
  /** Base URL for the Anthropic client (the origin; the SDK adds /v1/messages). */
  anthropicBaseUrl: string;
  requests: RecordedRequest[];
  chatRequests(): RecordedRequest[];
  /** Appends chat replies to the queue. */
  queueChat(...replies: FakeReply[]): void;
  queueEmbed(...replies: FakeReply[]): void;
  /** Scripted replies not yet consumed. */
  pendingChat(): number;
  close(): Promise<void>;
}

export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const chatQueue: FakeReply[] = [...(options.chat ?? [])];
  const embedQueue: FakeReply[] = [...(options.embed ?? [])];
  const embedDim = options.embedDim ?? 8;
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake-llm: ${(error as Error).message}` } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = ROUTES[`${req.method} ${(req.url ?? '').split('?')[0]}`];
    const raw = await readBody(req);
    if (!route) {
      sendJson(res, 404, { error: { message: `fake-llm: no route ${req.method} ${req.url}` } });
      return;
    }
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      sendJson(res, 400, { error: { message: 'fake-llm: body is not JSON' } });
      return;
    }
    const record: RecordedRequest = { ...route, path: req.url ?? '', headers: req.headers, body, abandoned: false };
    requests.push(record);

    const queue = route.kind === 'chat' ? chatQueue : embedQueue;
    const scripted = queue.shift();
    if (scripted === undefined && route.kind === 'chat') {
      sendError(res, route.api, 500, 'fake-llm: no scripted reply');
      return;
    }
    const step: FakeStep = typeof scripted === 'string' ? { content: scripted } : (scripted ?? {});
    if (step.delayMs) {
      const delivered = await wait(step.delayMs, req);
      if (!delivered) {
        record.abandoned = true;
        return;
      }
    }
    if (step.drop) {
      req.socket.destroy();
      return;
    }
    if (step.rawBody !== undefined) {
      res.writeHead(step.status ?? 200, { 'content-type': 'application/json', ...step.headers });
      res.end(step.rawBody);
      return;
    }
    if (step.status !== undefined && step.status >= 400) {
      sendError(res, route.api, step.status, step.content ?? `scripted HTTP ${step.status}`, step.headers);
      return;
    }
    if (step.body !== undefined) {
      sendJson(res, 200, step.body, step.headers);
      return;
    }
    if (step.streamBytes !== undefined) {
      streamHuge(res, step.streamBytes);
      return;
    }
    if (route.kind === 'chat') {
      const content = step.content ?? '';
      const payload =
        route.api === 'openai'
          ? openAiCompletion(body.model, content)
          : route.api === 'anthropic'
            ? anthropicMessage(body.model, content, step.toolInput, body.tool_choice?.name)
            : { model: body.model, message: { role: 'assistant', content }, done: true };
      sendJson(res, 200, payload, step.headers);
    } else {
      const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
      const vectors = step.vectors ?? inputs.map((text) => hashedVector(text, embedDim));
      const payload =
        route.api === 'openai'
          ? {
              object: 'list',
              model: body.model,
              data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
            }
          : { model: body.model, embeddings: vectors };
      sendJson(res, 200, payload, step.headers);
    }
  }

  /** Resolves true after `ms`, or false as soon as the client disconnects. */
  function wait(ms: number, req: IncomingMessage): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        req.socket.off('close', onClose);
        resolve(true);
      }, ms);
      const onClose = (): void => {
        clearTimeout(timer);
        timers.delete(timer);
        resolve(false);
      };
      timers.add(timer);
      req.socket.once('close', onClose);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    openaiBaseUrl: `${origin}/v1`,
    ollamaHost: origin,
    anthropicBaseUrl: origin,
    requests,
    chatRequests: () => requests.filter((request) => request.kind === 'chat'),
    queueChat: (...replies) => void chatQueue.push(...replies),
    queueEmbed: (...replies) => void embedQueue.push(...replies),
    pendingChat: () => chatQueue.length,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The text of every message of a recorded chat request, joined (for "the prompt contains …"). */
export function promptText(request: RecordedRequest): string {
  return (request.body.messages as Array<{ content: string }>).map((message) => message.content).join('\n');
}

/** A deterministic unit vector from the text, so equal texts embed equally. */
export function hashedVector(text: string, dim: number): number[] {
  const vector: number[] = [];
  for (let i = 0; vector.length < dim; i++) {
    const digest = createHash('sha256').update(`${i}:${text}`).digest();
    for (let j = 0; j + 4 <= digest.length && vector.length < dim; j += 4) vector.push(digest.readInt32LE(j) / 2 ** 31);
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

type Api = 'openai' | 'ollama' | 'anthropic';

const ROUTES: Record<string, { api: Api; kind: 'chat' | 'embed' }> = {
  'POST /v1/messages': { api: 'anthropic', kind: 'chat' },
  'POST /v1/chat/completions': { api: 'openai', kind: 'chat' },
  'POST /v1/embeddings': { api: 'openai', kind: 'embed' },
  'POST /api/chat': { api: 'ollama', kind: 'chat' },
  'POST /api/embed': { api: 'ollama', kind: 'embed' },
};

function openAiCompletion(model: string, content: string): object {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content, refusal: null } }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

/** A Messages API reply: text, or a tool_use block when the step scripts the tool's input. */
function anthropicMessage(model: string, content: string, toolInput: unknown, toolName: string | undefined): object {
  const block =
    toolInput !== undefined
      ? { type: 'tool_use', id: 'toolu_fake', name: toolName ?? 'answer', input: toolInput }
      : { type: 'text', text: content };
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content: [block],
    stop_reason: toolInput !== undefined ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

/** `{"pad": "xxxx…"}` of about `bytes` bytes, in 64 KiB chunks, with no content-length. */
function streamHuge(res: ServerResponse, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"pad": "');
  const chunk = 'x'.repeat(64 * 1024);
  let sent = 0;
  const more = (): void => {
    while (sent < bytes) {
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', more);
        return;
      }
    }
    res.end('"}');
  };
  res.on('close', () => res.off('drain', more));
  more();
}

function sendError(
  res: ServerResponse,
  api: Api,
  status: number,
  message: string,
  headers?: Record<string, string>,
): void {
  const payload =
    api === 'openai'
      ? { error: { message, type: 'fake_error' } }
      : api === 'anthropic'
        ? { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : 'api_error', message } }
        : { error: message };
  sendJson(res, status, payload, headers);
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
