// A lean streaming client for an OpenAI-compatible chat completions endpoint, for plain-text turns.
// The AI SDK's provider reads the same stream through fetch and four web-stream stages and validates
// every piece against a zod schema: at 1,000 open answers that was a third of the service's CPU
// (bench/stream-overhead). Here node:http reads the body, a line splitter finds the events and
// JSON.parse reads each piece. The request body, the headers that matter, the errors (APICallError,
// retryable as the SDK marks them) and the parts match the SDK's provider: a test runs both.
import http from 'node:http';
import https from 'node:https';
import { APICallError } from '@ai-sdk/provider';
import { pinnedLookup } from '../platform/net/guarded-fetch.js';
import { OutboundRefusedError, type OutboundPolicy } from '../platform/net/outbound-guard.js';

export interface ChatEndpoint {
  /** The full URL of the chat completions route. */
  url: URL;
  headers: Record<string, string>;
  modelId: string;
  /**
   * The outbound guard for a URL an administrator set: each request is checked and connected to the
   * checked address, on connections of its own. null: a URL of the deployment's configuration (trusted).
   */
  guard: OutboundPolicy | null;
}

export interface ChatStreamRequest {
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  maxTokens?: number;
  /** On the wire as `reasoning_effort`. */
  reasoningEffort?: string;
  signal?: AbortSignal;
}

export type ChatStreamPart =
  | { type: 'text'; text: string }
  | { type: 'error'; error: unknown }
  | { type: 'finish'; finishReason: string; usage: { inputTokens: number | undefined; outputTokens: number | undefined } };

/**
 * Kept-alive connections, as fetch keeps them, and as many idle ones as answers were open (node keeps
 * 256 by default): at 1,000 open answers the rest would be closed as answers end and opened again (a
 * TLS handshake each, to a real provider) by the next turns. The provider closes those it does not
 * want; a request that meets one it closed is sent again (post below).
 */
const KEEP_IDLE_CONNECTIONS = 4096;
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxFreeSockets: KEEP_IDLE_CONNECTIONS }),
  'https:': new https.Agent({ keepAlive: true, maxFreeSockets: KEEP_IDLE_CONNECTIONS }),
};
/** Guarded endpoints' connections, each made to an address the guard checked: never shared with trusted ones. */
const guardedAgents = {
  'http:': new http.Agent({ keepAlive: true, maxFreeSockets: KEEP_IDLE_CONNECTIONS }),
  'https:': new https.Agent({ keepAlive: true, maxFreeSockets: KEEP_IDLE_CONNECTIONS }),
};
/** An error answer is read for its message; beyond this it is cut. */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * Sends the request and resolves once the provider answered with a success status; rejects with an
 * APICallError for an error status or an unreachable endpoint, or with the abort reason.
 */
export interface ChatStream {
  /**
   * Hands every part to `onPart` as it arrives, the finish part last; resolves once the answer ended,
   * rejects when reading fails (with the abort reason after a cancel) or when `onPart` throws.
   */
  read(onPart: (part: ChatStreamPart) => void): Promise<void>;
}

export async function openChatStream(endpoint: ChatEndpoint, request: ChatStreamRequest): Promise<ChatStream> {
  const body = {
    model: endpoint.modelId,
    max_tokens: request.maxTokens,
    reasoning_effort: request.reasoningEffort,
    messages: request.messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  const response = await post(endpoint, JSON.stringify(body), body, request.signal);
  return { read: (onPart) => readParts(response, request.signal, onPart) };
}

/**
 * A kept-alive connection the provider closed while it sat idle fails the request at once (reset,
 * "socket hang up") before any answer: that request is sent again on a new connection, at once, as
 * Node's documentation advises. Any other failure is the caller's (with its retry rules).
 */
async function post(endpoint: ChatEndpoint, json: string, values: unknown, signal: AbortSignal | undefined): Promise<http.IncomingMessage> {
  try {
    return await send(endpoint, json, values, signal);
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
    // A connection of its own, so that another idle one cannot fail it the same way.
    return send(endpoint, json, values, signal, false);
  }
}

class StaleConnectionError extends Error {}

async function send(endpoint: ChatEndpoint, json: string, values: unknown, signal: AbortSignal | undefined, pooled = true): Promise<http.IncomingMessage> {
  const { url, guard } = endpoint;
  const client = url.protocol === 'https:' ? https : http;
  // Refused: the error is the guard's (not an APICallError, so never retried); a name that does not
  // resolve fails as a connection would.
  const target = guard ? await guard.check(url).catch((error: unknown) => Promise.reject(unreachable(error, url, values))) : undefined;
  const pool = target ? guardedAgents : agents;
  return new Promise((resolve, reject) => {
    const outgoing = client.request(url, {
      method: 'POST',
      agent: pooled ? pool[url.protocol as keyof typeof pool] : false,
      ...(target ? { lookup: pinnedLookup(target) } : {}),
      headers: { ...endpoint.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) },
      signal,
    });
    outgoing.once('error', (error: NodeJS.ErrnoException) => {
      if (signal?.aborted) reject(signal.reason ?? error);
      else if (outgoing.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) reject(new StaleConnectionError(error.message));
      else reject(new APICallError({ message: `Cannot connect to API: ${error.message}`, cause: error, url: url.href, requestBodyValues: values, isRetryable: true }));
    });
    outgoing.once('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        resolve(response);
        return;
      }
      readError(response).then(
        (text) => reject(providerError(response, status, text, url.href, values)),
        (error: unknown) => reject(signal?.aborted ? (signal.reason ?? error) : error),
      );
    });
    outgoing.end(json);
  });
}

function unreachable(error: unknown, url: URL, values: unknown): unknown {
  if (error instanceof OutboundRefusedError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new APICallError({ message: `Cannot connect to API: ${message}`, cause: error, url: url.href, requestBodyValues: values, isRetryable: true });
}

async function readError(response: http.IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const piece of response as AsyncIterable<string>) {
    if (text.length < MAX_ERROR_BODY) text += piece;
  }
  return text.slice(0, MAX_ERROR_BODY);
}

/** The provider's own message (`{error: {message}}`) when it sent one, else the status text, as the SDK does. */
function providerError(response: http.IncomingMessage, status: number, text: string, url: string, values: unknown): APICallError {
  let message = response.statusMessage ?? `HTTP ${status}`;
  let data: unknown;
  try {
    data = text.trim() ? JSON.parse(text) : undefined;
    const reported = (data as { error?: { message?: unknown } } | undefined)?.error?.message;
    if (typeof reported === 'string') message = reported;
  } catch {
    // Not JSON: the status text stands.
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers[name] = value;
  return new APICallError({ message, url, requestBodyValues: values, statusCode: status, responseHeaders: headers, responseBody: text, data });
}

/**
 * Reads the event stream's `data:` payloads as parts, handed to `onPart` from the socket's data event
 * (no promise or generator per piece: at 10,000 pieces a second their machinery cost more CPU than the
 * parsing). The finish part comes last; reading fails with the abort reason after a cancel.
 */
function readParts(response: http.IncomingMessage, signal: AbortSignal | undefined, onPart: (part: ChatStreamPart) => void): Promise<void> {
  response.setEncoding('utf8');
  let finishReason = 'other';
  let usage: { inputTokens: number | undefined; outputTokens: number | undefined } = { inputTokens: undefined, outputTokens: undefined };
  let pending = '';
  let data: string | undefined;

  const onPayload = (payload: string): void => {
    if (payload === '[DONE]') return;
    const text = plainTextPiece(payload);
    if (text !== undefined) {
      if (text) onPart({ type: 'text', text });
      return;
    }
    const chunk = readChunk(payload);
    if (chunk.type === 'error') return onPart(chunk);
    if (chunk.usage) usage = chunk.usage;
    if (chunk.finishReason !== undefined) finishReason = chunk.finishReason;
    const content = chunk.content;
    // A piece is one string as a rule: handed on as it is, with no array made for it.
    if (typeof content === 'string') {
      if (content) onPart({ type: 'text', text: content });
    } else if (Array.isArray(content)) for (const text of contentTexts(content)) onPart({ type: 'text', text });
  };
  const onText = (piece: string): void => {
    pending += piece;
    let start = 0;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
      const line = pending.charCodeAt(end - 1) === 13 ? pending.slice(start, end - 1) : pending.slice(start, end);
      start = end + 1;
      if (line === '') {
        // A blank line ends an event.
        if (data === undefined) continue;
        const payload = data;
        data = undefined;
        onPayload(payload);
      } else if (line.startsWith('data:')) {
        const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
        data = data === undefined ? value : `${data}\n${value}`;
      }
      // Other fields (event, id, retry) and comments carry nothing for a chat answer.
    }
    pending = start === 0 ? pending : pending.slice(start);
  };

  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      // A cancel surfaces as the reset of the connection: say it was the cancel.
      reject(signal?.aborted ? (signal.reason ?? error) : error);
      // Failing early (the consumer threw) lets the connection go.
      if (!response.complete) response.destroy();
    };
    response.on('data', (piece: string) => {
      if (settled) return;
      try {
        onText(piece);
      } catch (error) {
        fail(error);
      }
    });
    response.once('end', () => {
      if (settled) return;
      try {
        onPart({ type: 'finish', finishReason, usage });
        settled = true;
        resolve();
      } catch (error) {
        fail(error);
      }
    });
    response.once('error', fail);
    response.once('close', () => {
      if (!response.complete) fail(new Error('The provider closed the stream before it ended'));
    });
  });
}

interface Chunk {
  error?: { message?: unknown };
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  choices?: Array<{ delta?: { content?: unknown } | null; finish_reason?: unknown } | undefined>;
}

/** What one piece of the stream says: its usage and finish reason when it carries them, and its content as sent. */
type ReadChunk =
  | { type: 'error'; error: unknown }
  | { type: 'chunk'; usage?: { inputTokens: number | undefined; outputTokens: number | undefined }; finishReason?: string; content: unknown };

function readChunk(payload: string): ReadChunk {
  let chunk: Chunk;
  try {
    chunk = JSON.parse(payload) as Chunk;
  } catch {
    return { type: 'error', error: new Error(`The provider sent a piece that is not JSON: ${payload.slice(0, 200)}`) };
  }
  if (chunk === null || typeof chunk !== 'object') return { type: 'error', error: new Error('The provider sent a piece that is not an object') };
  if (chunk.error) return { type: 'error', error: typeof chunk.error.message === 'string' ? chunk.error.message : JSON.stringify(chunk.error) };
  const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  return {
    type: 'chunk',
    usage: chunk.usage ? { inputTokens: count(chunk.usage.prompt_tokens), outputTokens: count(chunk.usage.completion_tokens) } : undefined,
    finishReason: typeof choice?.finish_reason === 'string' ? unifiedFinishReason(choice.finish_reason) : undefined,
    content: choice?.delta?.content,
  };
}

const DELTA_CONTENT = '"choices":[{"index":0,"delta":{"content":"';
const PIECE_END = '"},"finish_reason":null}]}';
const PIECE_END_LOGPROBS = '"},"logprobs":null,"finish_reason":null}]}';

/**
 * The text of a piece that is only that (most of an answer's pieces), read without parsing the whole
 * piece: `{<the stream's fields>,"choices":[{"index":0,"delta":{"content":"<text>"},"finish_reason":null}]}`
 * (`"logprobs":null` before the finish reason allowed), as OpenAI and compatible servers write it, with no
 * whitespace. Any other piece (usage, a finish reason, a role, tool calls, an error, another layout)
 * answers undefined and is parsed whole, so both ways read the same parts (a test compares them). No
 * structure can hide in the fields before the choices: they must be strings, numbers, booleans or null.
 */
export function plainTextPiece(payload: string): string | undefined {
  if (payload.charCodeAt(0) !== 123 /* { */) return undefined;
  const at = payload.indexOf(DELTA_CONTENT);
  if (at === -1) return undefined;
  if (at !== 1) {
    if (payload.charCodeAt(at - 1) !== 44 /* , */) return undefined;
    const head = payload.slice(1, at - 1);
    if (head.includes('"error"') || head.includes('"usage"') || !SIMPLE_FIELDS.test(head)) return undefined;
  }
  // The text's closing quote: the first one not escaped (preceded by an even number of backslashes).
  const start = at + DELTA_CONTENT.length;
  let end = payload.indexOf('"', start);
  for (; end !== -1; end = payload.indexOf('"', end + 1)) {
    let slashes = 0;
    while (payload.charCodeAt(end - 1 - slashes) === 92 /* \\ */ && end - 1 - slashes >= start) slashes++;
    if (slashes % 2 === 0) break;
  }
  if (end === -1) return undefined;
  const tail = payload.length - end;
  if (!((tail === PIECE_END.length && payload.endsWith(PIECE_END)) || (tail === PIECE_END_LOGPROBS.length && payload.endsWith(PIECE_END_LOGPROBS)))) return undefined;
  const literal = payload.slice(start, end);
  if (literal.indexOf('\\') === -1 && !CONTROL.test(literal)) return literal;
  try {
    return JSON.parse(`"${literal}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * Fields of a JSON object, comma-separated, exactly as JSON.parse reads them: keys without escapes,
 * values that are strings (valid escapes only), numbers, booleans or null. No nesting.
 */
const SIMPLE_FIELDS = (() => {
  const key = String.raw`"[^"\\\u0000-\u001f]*"`;
  const text = String.raw`"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"`;
  const number = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`;
  const field = `${key}:(?:${text}|${number}|true|false|null)`;
  return new RegExp(`^${field}(?:,${field})*$`);
})();
/** A raw control character makes a JSON string invalid: such a piece is left to JSON.parse to refuse. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f]/;

const count = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** Content sent as parts: their text parts (reasoning and other parts are not the answer). */
function contentTexts(content: Array<{ type?: unknown; text?: unknown }>): string[] {
  const texts: string[] = [];
  for (const part of content) {
    if (part?.type === 'text' && typeof part.text === 'string' && part.text) texts.push(part.text);
  }
  return texts;
}

function unifiedFinishReason(reason: string): string {
  switch (reason) {
    case 'stop':
    case 'length':
      return reason;
    case 'content_filter':
      return 'content-filter';
    case 'function_call':
    case 'tool_calls':
      return 'tool-calls';
    default:
      return 'other';
  }
}
