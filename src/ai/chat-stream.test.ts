// The lean chat stream client against a raw loopback server that writes exactly the bytes a test
// gives it: events split anywhere (even inside a character), CRLF lines, several data lines, error
// pieces, error answers, a cancel mid-answer and connections kept alive between answers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { APICallError } from 'ai';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundPolicy, OutboundRefusedError } from '../platform/net/outbound-guard.js';
import { openChatStream, plainTextPiece, type ChatEndpoint, type ChatStreamPart } from './chat-stream.js';

interface Script {
  status?: number;
  statusMessage?: string;
  /** Written one after another, each flushed on its own. */
  writes: Array<string | Buffer>;
  /** Left open after the writes (the test ends it by cancelling). */
  hold?: boolean;
}

let server: http.Server;
let endpoint: ChatEndpoint;
const scripts: Script[] = [];
/** When set, a request that arrives on a connection that already served one is cut at once (a stale kept-alive connection). */
let cutReusedConnections = false;
const served = new WeakSet<object>();
/** Sockets of answers left open (hold). */
const held = new Set<import('node:net').Socket>();
const seen: Array<{ body: unknown; headers: http.IncomingHttpHeaders; remotePort: number | undefined }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (cutReusedConnections && served.has(req.socket)) {
      req.socket.destroy();
      return;
    }
    served.add(req.socket);
    let raw = '';
    req.on('data', (piece: Buffer) => (raw += piece.toString()));
    req.on('end', async () => {
      seen.push({ body: JSON.parse(raw), headers: req.headers, remotePort: req.socket.remotePort });
      const script = scripts.shift() ?? { writes: [] };
      if (script.hold) held.add(req.socket);
      res.writeHead(script.status ?? 200, script.statusMessage, { 'content-type': script.status ? 'application/json' : 'text/event-stream' });
      for (const write of script.writes) {
        res.write(write);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      if (!script.hold) res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  endpoint = { url: new URL(`http://127.0.0.1:${port}/v1/chat/completions`), headers: { authorization: 'Bearer k1' }, modelId: 'm1', guard: null };
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  scripts.length = 0;
  seen.length = 0;
});

const piece = (content: unknown, extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ choices: [{ delta: { content }, ...extra }] })}\n\n`;
const usage = (prompt: number, completion: number) => `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion } })}\n\n`;

async function collect(signal?: AbortSignal): Promise<ChatStreamPart[]> {
  const parts: ChatStreamPart[] = [];
  const stream = await openChatStream(endpoint, { messages: [{ role: 'user', content: 'Hi' }], signal });
  await stream.read((part) => parts.push(part));
  return parts;
}

describe('openChatStream', () => {
  it('checks a guarded endpoint (an administrator set it): refused before any connection, else to the checked address', async () => {
    const strict = { ...endpoint, guard: createOutboundPolicy({ allowedHosts: [] }) };
    const refused = await openChatStream(strict, { messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OutboundRefusedError);
    expect(refused).toMatchObject({ status: 400, code: 'URL_NOT_ALLOWED' });
    expect(seen).toHaveLength(0);

    // Allowed, under a name that resolves to it: the connection goes to the address the check answered.
    const named = { ...endpoint, url: new URL(endpoint.url.href.replace('127.0.0.1', 'model.internal.test')) };
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    scripts.push({ writes: [piece('ok'), 'data: [DONE]\n\n'] });
    const allowed = await openChatStream({ ...named, guard: createOutboundPolicy({ allowedHosts: ['model.internal.test'], resolve }) }, { messages: [{ role: 'user', content: 'Hi' }] });
    const parts: ChatStreamPart[] = [];
    await allowed.read((part) => parts.push(part));
    expect(parts[0]).toEqual({ type: 'text', text: 'ok' });
    expect(seen).toHaveLength(1);
  });

  it('sends the request as the SDK provider does and reads text, finish reason and usage', async () => {
    scripts.push({ writes: [piece('Hel'), piece('lo'), piece(null, { finish_reason: 'stop' }), usage(12, 2), 'data: [DONE]\n\n'] });
    const parts = await openChatStream(endpoint, { messages: [{ role: 'user', content: 'Hi' }], maxTokens: 50, reasoningEffort: 'low' });
    const collected: ChatStreamPart[] = [];
    await parts.read((part) => collected.push(part));

    expect(collected).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 2 } },
    ]);
    expect(seen[0].body).toEqual({
      model: 'm1',
      max_tokens: 50,
      reasoning_effort: 'low',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(seen[0].headers).toMatchObject({ authorization: 'Bearer k1', 'content-type': 'application/json' });
  });

  it('finds events split anywhere, even inside a character, with CRLF lines and several data lines', async () => {
    const event = piece('Grüße, ');
    const bytes = Buffer.from(event + 'data: {"choices":[{"delta":\r\ndata: {"content":"wörld"}}]}\r\n\r\n' + ': a comment\n\nevent: x\nid: 7\n' + piece('!'));
    const cut = Buffer.from('data: {"choices":[{"delta":{"content":"Gr').length + 1; // inside "ü"
    scripts.push({ writes: [bytes.subarray(0, cut), bytes.subarray(cut, cut + 9), bytes.subarray(cut + 9)] });
    expect(await collect()).toEqual([
      { type: 'text', text: 'Grüße, ' },
      { type: 'text', text: 'wörld' },
      { type: 'text', text: '!' },
      { type: 'finish', finishReason: 'other', usage: { inputTokens: undefined, outputTokens: undefined } },
    ]);
  });

  it('reads text parts of an array content and maps finish reasons as the SDK does', async () => {
    scripts.push({ writes: [piece([{ type: 'text', text: 'a' }, { type: 'image_url' }, { type: 'text', text: 'b' }], { finish_reason: 'content_filter' })] });
    expect(await collect()).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'finish', finishReason: 'content-filter', usage: { inputTokens: undefined, outputTokens: undefined } },
    ]);
    scripts.push({ writes: [piece('x', { finish_reason: 'tool_calls' })] }, { writes: [piece('y', { finish_reason: 'length' })] }, { writes: [piece('z', { finish_reason: 'odd' })] });
    expect((await collect()).at(-1)).toMatchObject({ finishReason: 'tool-calls' });
    expect((await collect()).at(-1)).toMatchObject({ finishReason: 'length' });
    expect((await collect()).at(-1)).toMatchObject({ finishReason: 'other' });
  });

  it('passes on an error piece and a piece that is not JSON as errors', async () => {
    scripts.push({ writes: [piece('part'), `data: ${JSON.stringify({ error: { message: 'context too long' } })}\n\n`, 'data: {oops\n\n'] });
    const parts = await collect();
    expect(parts.slice(0, 2)).toEqual([
      { type: 'text', text: 'part' },
      { type: 'error', error: 'context too long' },
    ]);
    expect(parts[2]).toMatchObject({ type: 'error' });
    expect(String((parts[2] as { error: Error }).error.message)).toMatch(/not JSON: \{oops/);
  });

  it('rejects an error answer with the provider message, the status and whether to retry', async () => {
    scripts.push({ status: 429, writes: [JSON.stringify({ error: { message: 'slow down' } })] });
    const limited = await collect().catch((error: unknown) => error);
    expect(APICallError.isInstance(limited)).toBe(true);
    expect(limited).toMatchObject({ message: 'slow down', statusCode: 429, isRetryable: true });

    scripts.push({ status: 401, statusMessage: 'Unauthorized', writes: ['<html>no</html>'] });
    expect(await collect().catch((error: unknown) => error)).toMatchObject({ message: 'Unauthorized', statusCode: 401, isRetryable: false, responseBody: '<html>no</html>' });
  });

  it('rejects an unreachable endpoint as a retryable connection failure', async () => {
    const away = { ...endpoint, url: new URL('http://127.0.0.1:9/v1/chat/completions') };
    const error = await openChatStream(away, { messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ isRetryable: true });
    expect((error as Error).message).toMatch(/^Cannot connect to API: .*ECONNREFUSED/);
  });

  it('stops reading when cancelled mid-answer', async () => {
    scripts.push({ writes: [piece('one ')], hold: true });
    const controller = new AbortController();
    const parts: ChatStreamPart[] = [];
    const stream = await openChatStream(endpoint, { messages: [{ role: 'user', content: 'Hi' }], signal: controller.signal });
    const reading = stream.read((part) => {
      parts.push(part);
      controller.abort();
    });
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    expect(parts).toEqual([{ type: 'text', text: 'one ' }]);
  });

  it('sends a request again, at once, on a new connection when a kept-alive one turns out closed', async () => {
    scripts.push({ writes: [piece('first')] }, { writes: [piece('second')] });
    await collect();
    cutReusedConnections = true;
    try {
      expect(await collect()).toEqual([
        { type: 'text', text: 'second' },
        { type: 'finish', finishReason: 'other', usage: { inputTokens: undefined, outputTokens: undefined } },
      ]);
    } finally {
      cutReusedConnections = false;
    }
    expect(seen).toHaveLength(2);
    expect(seen[1].remotePort).not.toBe(seen[0].remotePort);
  });

  it('fails the read and lets the connection go when the consumer throws', async () => {
    scripts.push({ writes: [piece('one '), piece('two ')], hold: true });
    const stream = await openChatStream(endpoint, { messages: [{ role: 'user', content: 'Hi' }] });
    const parts: ChatStreamPart[] = [];
    const reading = stream.read((part) => {
      parts.push(part);
      throw new Error('the consumer failed');
    });
    await expect(reading).rejects.toThrow('the consumer failed');
    expect(parts).toEqual([{ type: 'text', text: 'one ' }]);
  });

  it('fails the read when the provider drops the connection mid-answer', async () => {
    scripts.push({ writes: [piece('one ')], hold: true });
    const stream = await openChatStream(endpoint, { messages: [{ role: 'user', content: 'Hi' }] });
    const parts: ChatStreamPart[] = [];
    const reading = stream.read((part) => {
      parts.push(part);
      for (const socket of held) socket.destroy();
    });
    await expect(reading).rejects.toBeInstanceOf(Error);
    expect(parts).toEqual([{ type: 'text', text: 'one ' }]);
  });

  it('keeps the connection alive from one answer to the next', async () => {
    scripts.push({ writes: [piece('a')] }, { writes: [piece('b')] });
    await collect();
    await collect();
    expect(seen).toHaveLength(2);
    expect(seen[1].remotePort).toBe(seen[0].remotePort);
  });
});

describe('plainTextPiece: a text piece read without parsing it whole', () => {
  const openAi = (content: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'm', system_fingerprint: null, choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }], ...extra });

  it('reads the text as JSON.parse does, escapes, quotes, surrogates and all', () => {
    for (const text of ['Hello', '', 'a "quoted" word\\', 'line\nnext\ttab', '\\"', 'é😀\u2028', '"}],"finish_reason":null}]}', '\\\\"x']) {
      expect(plainTextPiece(openAi(text))).toBe(text);
      expect(plainTextPiece(JSON.stringify({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }))).toBe(text);
    }
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.dictionary(fc.string().filter((key) => !['choices', 'error', 'usage'].includes(key)), fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null))), (text, fields) => {
        const payload = JSON.stringify({ ...fields, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
        const read = plainTextPiece(payload);
        // Keys with escapes are left to the whole parse; whatever is read is what JSON.parse reads.
        if (read !== undefined) expect(read).toBe(text);
        if (Object.keys(fields).every((key) => JSON.stringify(key) === `"${key}"` && !/[\u0000-\u001f]/.test(key))) expect(read).toBe(text);
      }),
    );
  });

  it('leaves every other piece to the whole parse', () => {
    const leftAlone = [
      openAi('a', { usage: { prompt_tokens: 1, completion_tokens: 1 } }),
      JSON.stringify({ choices: [{ index: 0, delta: { content: 'a' }, finish_reason: 'stop' }] }),
      JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: 'a' }, finish_reason: null }] }),
      JSON.stringify({ choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }, { index: 1, delta: { content: 'b' }, finish_reason: null }] }),
      JSON.stringify({ error: 'x', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] }),
      JSON.stringify({ usage: null, choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] }),
      JSON.stringify({ meta: { a: 1 }, choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] }),
      '{"err\\u006fr":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}',
      '{"id":"\\x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}',
      '{"n":01,"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}',
      '{"choices":[{"index":0,"delta":{"content":"a\\q"},"finish_reason":null}]}',
      '{"choices":[{"index":0,"delta":{"content":"a\u0001"},"finish_reason":null}]}',
      '{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]} ',
      '{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}}',
      '{ "choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}',
      '{"choices":[{"index":0,"delta":{"content":"a"}',
    ];
    for (const payload of leftAlone) expect(plainTextPiece(payload), payload).toBeUndefined();
  });
});
