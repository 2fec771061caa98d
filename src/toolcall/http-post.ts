/**
 * One POST through the HTTP proxy: the client's JSON-RPC messages through the session, the ones
 * forwarded sent upstream in one POST, and its reply (JSON, or an SSE stream read event by event)
 * back through the session, so mutations and delays apply per message and SSE event ids survive.
 *
 *   admit      every message through PlaneSession.fromClient; answers made here wait in `early`
 *   forward    what was forwarded at once goes upstream in one POST (as a batch when the client's was)
 *   relay      the reply's messages through fromServer: SSE → written as events as they come;
 *              JSON → gathered with the answers made here into one JSON reply
 *   late       a call forwarded later (it waited for a head-of-line slot) goes upstream on its own;
 *              its answers join this reply
 *
 * Bounds: the client's body (maxBody), every message within the plane's limits, the upstream
 * reply within the per-message bound and the proxy's byte budget. A reply past them is passed
 * through unread (fail-safe) or its requests answered with JSON-RPC errors (strict, and always
 * for an SSE event, which cannot be passed on without being held whole).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMessageObject, readJson, type JsonRpcMessage } from '../jsonrpc/message.js';
import { readBody } from '../jsonrpc/http-body.js';
import { peekId } from '../jsonrpc/peek-id.js';
import { readSseStream, toSseResponse, writeMessageEvent } from './http-sse.js';
import { copyHead, headerOf, isSse, jsonError, pipeTo, sendJson, writeChunk } from './http-reply.js';
import { readBounded, type ByteBudget, type BoundedBody, type Upstream } from './http-upstream.js';
import type { PlaneSession, ToolPlane } from './session.js';

export interface SessionState {
  session: PlaneSession;
  /** The client's open GET streams, where notifications made here are sent when a reply is plain JSON. */
  streams: Set<ServerResponse>;
}

export interface SessionLookup {
  /** The state of a client session (created on first use). */
  get(id: string | undefined): SessionState;
  /** The state for the id an upstream reply just named (an initialize reply). */
  adopt(id: string): SessionState;
}

/** What a POST exchange needs of its proxy. */
export interface ProxyContext {
  plane: ToolPlane;
  upstream: Upstream;
  sessions: SessionLookup;
  budget: ByteBudget;
  maxBody: number;
}

export class PostExchange {
  private messages: JsonRpcMessage[] = [];
  private batchForm = false;
  private state!: SessionState;
  /** Answers made here (or relayed from late forwards) while the reply's form is unknown, or for a JSON reply. */
  private readonly early: JsonRpcMessage[] = [];
  private write: ((message: JsonRpcMessage) => void) | undefined;
  private collecting = true;
  private readonly batch: JsonRpcMessage[] = [];
  private readonly late: Array<Promise<void>> = [];

  constructor(
    private readonly ctx: ProxyContext,
    private readonly res: ServerResponse,
    private readonly signal: AbortSignal,
    private readonly headers: Record<string, string>,
    private readonly sessionId: string | undefined,
  ) {}

  async run(req: IncomingMessage): Promise<void> {
    const bodyRead = await readBody(req, this.res, this.ctx.maxBody);
    if (!bodyRead.ok) return jsonError(this.res, bodyRead.status, `faultline toolcall: ${bodyRead.problem}`);
    const body = bodyRead.bytes;
    const text = body.toString('utf8');
    const read = readJson(text, this.ctx.plane.limits);
    const beyond = read.ok ? undefined : this.ctx.plane.beyondBounds(text);
    if (beyond !== undefined) return this.unreadableRequest(text, body, beyond);
    const value = read.ok ? read.value : undefined;
    this.batchForm = Array.isArray(value);
    const messages = Array.isArray(value) ? value.filter(isMessageObject) : isMessageObject(value) ? [value] : [];
    if (messages.length === 0 || (Array.isArray(value) && messages.length !== value.length))
      return this.passThrough(body); // not JSON-RPC we understand: the upstream decides
    this.messages = messages;
    this.state = this.ctx.sessions.get(this.sessionId);
    // A client that hangs up before its answers arrive (a client-side timeout, a killed agent)
    // has its calls recorded unanswered now; after a finished reply nothing is pending any more.
    this.res.on('close', () => {
      if (!this.res.writableFinished) this.state.session.clientGone(this.messages);
    });
    const admitted = Promise.all(
      this.messages.map((m) =>
        this.state.session.fromClient(
          m,
          (out) => this.toServer(out),
          (out) => this.toClient(out),
        ),
      ),
    );
    this.collecting = false;
    if (this.batch.length === 0) {
      await admitted;
      await Promise.all(this.late);
      return this.replyJson(this.state, 200);
    }
    return this.forwardBatch(admitted);
  }

  private toClient(message: JsonRpcMessage): void {
    if (this.write) this.write(message);
    else this.early.push(message);
  }

  private toServer(message: JsonRpcMessage): void {
    if (this.collecting) this.batch.push(message);
    else this.late.push(this.forwardLate(message));
  }

  /** A request too deeply nested to read: fail-safe sends it on as it came; strict answers it with an error. */
  private async unreadableRequest(text: string, body: Buffer, problem: string): Promise<void> {
    const session = this.ctx.sessions.get(this.sessionId).session;
    let forward = false;
    session.clientUnreadable(
      peekId(text),
      problem,
      () => (forward = true),
      (answer) => this.early.push(answer),
    );
    if (forward) return this.passThrough(body);
    if (this.early.length > 0) return sendJson(this.res, 200, this.early[0]);
    return jsonError(this.res, 400, `faultline toolcall: the request could not be read: ${problem}`);
  }

  private async passThrough(body: Buffer): Promise<void> {
    const reply = await this.ctx.upstream.send('POST', this.headers, body, this.signal);
    copyHead(reply, this.res);
    await pipeTo(reply, this.res);
  }

  private async forwardBatch(admitted: Promise<unknown>): Promise<void> {
    const { plane, upstream } = this.ctx;
    const forwarded = this.batch;
    let reply: IncomingMessage;
    try {
      const toolCalls = forwarded.filter(isToolCall).length;
      reply = await upstream.send(
        'POST',
        this.headers,
        JSON.stringify(this.batchForm ? forwarded : forwarded[0]),
        this.signal,
        toolCalls,
      );
    } catch (error) {
      if (this.signal.aborted) throw error; // the client went away: not the upstream's failure
      // The upstream is down (refused, reset): its failure, not the proxy's. The calls sent
      // are recorded unanswered at once and the client gets a 502 naming the cause.
      const reason = (error as Error).message;
      plane.upstreamUnreachable(reason);
      this.state.session.upstreamFailed(forwarded);
      await admitted;
      return jsonError(
        this.res,
        502,
        `faultline toolcall: the upstream ${upstream.url.href} could not be reached: ${reason}`,
      );
    }
    const upstreamSessionId = headerOf(reply, 'mcp-session-id');
    const target = upstreamSessionId && !this.sessionId ? this.ctx.sessions.adopt(upstreamSessionId) : this.state;
    if (isSse(reply)) return this.relaySseReply(reply, target, admitted);
    return this.relayJsonReply(reply, target, admitted);
  }

  /**
   * The upstream dropped the connection in the middle of its answer (it died, or reset): its
   * failure, as a refused connection is; the calls still waiting will never be answered.
   */
  private dropped(error: unknown): void {
    this.ctx.plane.upstreamUnreachable(
      `the connection dropped mid-answer: ${(error as Error)?.message ?? String(error)}`,
    );
    this.state.session.upstreamFailed(this.batch);
  }

  private async relaySseReply(reply: IncomingMessage, target: SessionState, admitted: Promise<unknown>): Promise<void> {
    copyHead(reply, this.res);
    this.write = (message) => writeMessageEvent(this.res, message);
    this.early.splice(0).forEach(this.write);
    const end = await readSseStream(reply, target.session, this.ctx.budget, toSseResponse(this.res, target.session));
    if (end.failure !== undefined && !this.signal.aborted) this.dropped(end.failure);
    if (end.oversize !== undefined) target.session.failForwarded(this.batch, end.oversize);
    await admitted;
    await Promise.all(this.late);
    this.res.end();
  }

  private async relayJsonReply(
    reply: IncomingMessage,
    target: SessionState,
    admitted: Promise<unknown>,
  ): Promise<void> {
    let body: BoundedBody;
    try {
      body = await readBounded(reply, this.ctx.plane.limits.maxChars, this.ctx.budget);
    } catch (error) {
      if (this.signal.aborted) throw error; // the client went away: not the upstream's failure
      this.dropped(error);
      await admitted;
      return jsonError(
        this.res,
        502,
        `faultline toolcall: the upstream ${this.ctx.upstream.url.href} ` +
          `dropped the connection mid-answer: ${(error as Error).message}`,
      );
    }
    if (!body.complete) return this.unreadableReply(reply, body, target, admitted);
    const text = body.body.toString('utf8');
    const ok = reply.statusCode !== undefined && reply.statusCode >= 200 && reply.statusCode < 300;
    const read = text ? readJson(text, this.ctx.plane.limits) : { ok: true as const, value: undefined };
    const beyond = read.ok ? undefined : this.ctx.plane.beyondBounds(text);
    if (beyond !== undefined)
      return this.unreadableReply(
        reply,
        { complete: false, head: [body.body], rest: emptyRest(), problem: beyond },
        target,
        admitted,
      );
    if (!read.ok) {
      copyHead(reply, this.res);
      return void this.res.end(text);
    }
    if (reply.statusCode === 202 || !ok) {
      await admitted;
      if (this.early.length === 0 || !ok) {
        copyHead(reply, this.res);
        return void this.res.end(text);
      }
    }
    const value = read.value;
    const upstreamMessages = (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
      isMessageObject,
    );
    await Promise.all(upstreamMessages.map((m) => target.session.fromServer(m, (out) => this.early.push(out))));
    await admitted;
    await Promise.all(this.late);
    // A 202 (notifications accepted) with answers made here is a reply with content now.
    return this.replyJson(target, reply.statusCode === 202 ? 200 : (reply.statusCode ?? 200), reply);
  }

  /**
   * An upstream JSON reply past the bounds. Fail-safe: the client gets it as it came (streamed,
   * never held) and the calls it answers are recorded as answered, unread. Strict: each
   * forwarded request is answered with a JSON-RPC error and the rest of the reply is dropped.
   */
  private async unreadableReply(
    reply: IncomingMessage,
    body: Extract<BoundedBody, { complete: false }>,
    target: SessionState,
    admitted: Promise<unknown>,
  ): Promise<void> {
    const ids = this.batch.filter((m) => m.id !== undefined && m.id !== null).map((m) => m.id!);
    for (const id of ids) target.session.serverUnreadable(id, body.problem);
    if (this.ctx.plane.strict) {
      reply.destroy();
      await admitted;
      await Promise.all(this.late);
      return this.replyJson(target, 200);
    }
    copyHead(reply, this.res);
    for (const chunk of body.head) await writeChunk(this.res, chunk);
    await pipeTo({ [Symbol.asyncIterator]: () => body.rest }, this.res);
    await admitted;
  }

  /**
   * A call forwarded after this POST's own request went upstream (it waited for a head-of-line
   * slot): sent on its own, its reply's messages delivered as answers of this POST.
   */
  private async forwardLate(message: JsonRpcMessage): Promise<void> {
    const session = this.state.session;
    const deliver = (out: JsonRpcMessage): void => this.toClient(out);
    let reply: IncomingMessage;
    try {
      reply = await this.ctx.upstream.send(
        'POST',
        this.headers,
        JSON.stringify(message),
        this.signal,
        isToolCall(message) ? 1 : 0,
      );
    } catch (error) {
      if (this.signal.aborted) return;
      this.ctx.plane.upstreamUnreachable((error as Error).message);
      session.upstreamFailed([message]);
      if (message.id !== undefined && message.id !== null)
        deliver(unreachableError(message.id, this.ctx.upstream.url.href, (error as Error).message));
      return;
    }
    if (isSse(reply)) {
      const end = await readSseStream(reply, session, this.ctx.budget, {
        message: (m) => session.fromServer(m, deliver),
        raw: () => undefined,
      });
      if (end.oversize !== undefined) session.failForwarded([message], end.oversize);
      else if (end.failure !== undefined && !this.signal.aborted) session.upstreamFailed([message]);
      return;
    }
    const body = await readBounded(reply, this.ctx.plane.limits.maxChars, this.ctx.budget).catch(() => undefined);
    const read = body?.complete ? readJson(body.body.toString('utf8'), this.ctx.plane.limits) : undefined;
    if (!read?.ok)
      return session.failForwarded(
        [message],
        body && !body.complete ? body.problem : "the upstream's reply could not be read",
      );
    const values = Array.isArray(read.value) ? read.value : [read.value];
    await Promise.all(values.filter(isMessageObject).map((m) => session.fromServer(m, deliver)));
  }

  /** The gathered answers as one JSON reply (202 when there are none); notifications go to the client's GET streams. */
  private replyJson(target: SessionState, status: number, upstreamReply?: IncomingMessage): void {
    const responses = this.early.filter((m) => m.method === undefined);
    for (const note of this.early.filter((m) => m.method !== undefined))
      for (const stream of target.streams) writeMessageEvent(stream, note);
    if (upstreamReply) copyHead(upstreamReply, this.res);
    if (responses.length === 0 && !upstreamReply) {
      this.res.writeHead(202).end();
      return;
    }
    this.res.statusCode = status;
    this.res.setHeader('content-type', 'application/json');
    this.res.end(JSON.stringify(this.batchForm ? responses : (responses[0] ?? null)));
  }
}

function isToolCall(message: JsonRpcMessage): boolean {
  return message.method === 'tools/call' && message.id !== undefined && message.id !== null;
}

function unreachableError(id: string | number, url: string, reason: string): JsonRpcMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: -32603, message: `faultline toolcall: the upstream ${url} could not be reached: ${reason}` },
  };
}

function emptyRest(): AsyncIterator<Buffer> {
  return { next: async () => ({ done: true, value: undefined }) };
}
