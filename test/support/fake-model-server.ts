// A fake OpenAI-compatible model server on loopback, a real node:http peer for tests of the
// conversation engine: scripted chat replies (SSE or JSON, text, tool calls, errors, stalls),
// deterministic embeddings, and a record of every request it was sent.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface FakeToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * One scripted answer. Note: the AI SDK retries 408/409/429/5xx twice by default, so an enqueued
 * error is consumed by the first attempt only: pass `maxRetries: 0` or use setDefault for errors.
 */
export type FakeReply =
  | {
      /** Text pieces, one SSE chunk each; `[]` is an empty answer. */
      chunks: string[];
      gapMs?: number;
      usage?: FakeUsage;
      /** Write this many chunks, then hold the connection open until the client aborts. */
      stallAfter?: number;
    }
  | { toolCalls: FakeToolCall[]; usage?: FakeUsage }
  | { status: number; error: string };

/** A chat message as the client put it on the wire. */
export interface WireMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface WireTool {
  type: string;
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, as sent. */
  body: Record<string, unknown>;
  model?: string;
  messages: WireMessage[];
  /** The system messages' text, joined with newlines. */
  system: string;
  tools: WireTool[];
  reasoningEffort?: string;
  stream: boolean;
  /** Embedding inputs. */
  input: string[];
  /** True once the client went away before the answer was complete. */
  aborted: boolean;
}

export interface FakeModelServer {
  /** Base URL ending in /v1. */
  url: string;
  requests: RecordedRequest[];
  enqueue(reply: FakeReply): void;
  setDefault(reply: FakeReply): void;
  close(): Promise<void>;
}

export interface FakeModelServerOptions {
  /** Embedding size when the request does not ask for `dimensions`; 64 by default. */
  embeddingDimensions?: number;
  /** Accepts a request only when this says yes to its Authorization header (else 401, not recorded); default: any. */
  authorize?: (authorization: string | undefined) => boolean | Promise<boolean>;
}

export async function startFakeModelServer(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  const queue: FakeReply[] = [];
  let fallback: FakeReply = { chunks: ['ok'] };
  const requests: RecordedRequest[] = [];
  let completionCount = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      // A bug in the fake must fail the test loudly, not hang it.
      if (!res.headersSent) sendJson(res, 500, errorBody(String(error)));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const route = req.method === 'POST' ? path : '';
    if (route !== '/v1/chat/completions' && route !== '/v1/embeddings') {
      sendJson(res, 404, errorBody(`No route for ${req.method} ${path}`, 'invalid_request_error'));
      return;
    }
    const raw = await readBody(req);
    if (options.authorize && !(await options.authorize(req.headers.authorization))) {
      sendJson(res, 401, errorBody('Incorrect API key provided', 'invalid_request_error'));
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = asObject(JSON.parse(raw));
    } catch {
      sendJson(res, 400, errorBody('Body is not valid JSON', 'invalid_request_error'));
      return;
    }
    const recorded = record(path, req.headers, body);
    requests.push(recorded);
    const connection = watchClose(res, recorded);
    if (route === '/v1/embeddings') {
      sendJson(res, 200, embeddingsBody(recorded, options.embeddingDimensions ?? 64));
      return;
    }
    const reply = queue.shift() ?? fallback;
    completionCount += 1;
    await answerChat(res, recorded, reply, `chatcmpl-fake-${completionCount}`, connection);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (reply) => void queue.push(reply),
    setDefault: (reply) => {
      fallback = reply;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Stalled answers would otherwise keep close() waiting forever.
        server.closeAllConnections();
      }),
  };
}

/** A hashed bag of words, L2-normalised: same text, same vector; shared words, closer vectors. */
export function fakeEmbedding(text: string, dimensions = 64): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const hash = fnv1a(word);
    vector[hash % dimensions] += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  if (norm === 0) return vector.map((_, i) => (i === 0 ? 1 : 0));
  return vector.map((value) => value / norm);
}

interface Connection {
  closed: () => boolean;
  /** Resolves when the client goes away. */
  gone: Promise<void>;
}

async function answerChat(
  res: ServerResponse,
  request: RecordedRequest,
  reply: FakeReply,
  id: string,
  connection: Connection,
): Promise<void> {
  if ('status' in reply) {
    sendJson(res, reply.status, errorBody(reply.error));
    return;
  }
  const created = Math.floor(Date.now() / 1000);
  const envelope = (object: string) => ({ id, object, created, model: request.model ?? 'fake-model', system_fingerprint: null });
  const text = 'chunks' in reply ? reply.chunks.join('') : '';
  const toolCalls = 'toolCalls' in reply ? reply.toolCalls : [];
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  const completionText = text + toolCalls.map((call) => call.name + JSON.stringify(call.arguments)).join('');
  const usage = toWireUsage(
    reply.usage ?? {
      prompt_tokens: Math.ceil(JSON.stringify(request.messages).length / 4),
      completion_tokens: Math.ceil(completionText.length / 4),
    },
  );
  const stallAfter = 'chunks' in reply ? reply.stallAfter : undefined;

  if (!request.stream) {
    if (stallAfter !== undefined) return connection.gone;
    const wireCalls = toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    sendJson(res, 200, {
      ...envelope('chat.completion'),
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: toolCalls.length > 0 ? null : text, refusal: null, ...(wireCalls.length > 0 ? { tool_calls: wireCalls } : {}) },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      usage,
    });
    return;
  }

  const streamOptions = asObject(request.body.stream_options);
  const includeUsage = streamOptions.include_usage === true;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (data: unknown): void => {
    if (!connection.closed()) res.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null): void =>
    send({
      ...envelope('chat.completion.chunk'),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });

  // OpenAI opens with the role and an empty content (null content when tools follow).
  chunk({ role: 'assistant', content: toolCalls.length > 0 ? null : '' }, null);
  const pieces = 'chunks' in reply ? reply.chunks : [];
  const gapMs = 'chunks' in reply ? (reply.gapMs ?? 0) : 0;
  for (const [index, piece] of pieces.entries()) {
    if (stallAfter !== undefined && index >= stallAfter) return connection.gone;
    if (index > 0 && gapMs > 0) await sleep(gapMs);
    if (connection.closed()) return;
    chunk({ content: piece }, null);
  }
  if (stallAfter !== undefined) return connection.gone;
  for (const [index, call] of toolCalls.entries()) {
    // Arguments arrive split, as real servers send them, to exercise incremental parsing.
    const args = JSON.stringify(call.arguments);
    const half = Math.ceil(args.length / 2);
    chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null);
    chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }, null);
    chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, null);
  }
  chunk({}, finishReason);
  if (includeUsage) send({ ...envelope('chat.completion.chunk'), choices: [], usage });
  if (!connection.closed()) res.end('data: [DONE]\n\n');
}

function embeddingsBody(request: RecordedRequest, defaultDimensions: number): Record<string, unknown> {
  const dimensions = typeof request.body.dimensions === 'number' ? request.body.dimensions : defaultDimensions;
  const tokens = request.input.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return {
    object: 'list',
    data: request.input.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, dimensions) })),
    model: request.model ?? 'fake-embedding',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

function record(path: string, headers: IncomingHttpHeaders, body: Record<string, unknown>): RecordedRequest {
  const messages = Array.isArray(body.messages) ? (body.messages as WireMessage[]) : [];
  const input = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input.map(String) : [];
  return {
    path,
    headers,
    body,
    model: typeof body.model === 'string' ? body.model : undefined,
    messages,
    system: messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => contentText(m.content))
      .join('\n'),
    tools: Array.isArray(body.tools) ? (body.tools as WireTool[]) : [],
    reasoningEffort: typeof body.reasoning_effort === 'string' ? body.reasoning_effort : undefined,
    stream: body.stream === true,
    input,
    aborted: false,
  };
}

function watchClose(res: ServerResponse, recorded: RecordedRequest): Connection {
  let closed = false;
  const gone = new Promise<void>((resolve) => {
    res.on('close', () => {
      closed = true;
      if (!res.writableFinished) recorded.aborted = true;
      resolve();
    });
  });
  return { closed: () => closed, gone };
}

function contentText(content: WireMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => part.text ?? '').join('');
}

function toWireUsage(usage: FakeUsage): Record<string, number> {
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

function errorBody(message: string, type = 'server_error'): Record<string, unknown> {
  return { error: { message, type, param: null, code: null } };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function fnv1a(word: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(word, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
