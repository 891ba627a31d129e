// The web client's own logic, outside the browser: how an answer is assembled from what each transport
// delivers, asking again over a new socket when the service answers streamingFailed (the question kept),
// falling back to SSE, stopping, Markdown sanitizing (jsdom as the DOM, from web/node_modules), and the
// words each failure the service can answer is shown in.
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../web/src/api/api-error.js';
import { explainError } from '../../web/src/api/errors.js';
import { ask, MAX_RECONNECTS, type AskDeps, type AskEvent, type ChunkPayload, type QandaJson, type SocketLink } from '../../web/src/chat/ask.js';
import { createMarkdownRenderer } from '../../web/src/chat/markdown.js';
import { parseBlock, readSseFrames } from '../../web/src/chat/sse.js';
import { applyStreamEvent, EMPTY_ANSWER_NOTICE, initialAnswer, settleCancelled, type AnswerState, type StreamEvent } from '../../web/src/chat/stream-assembly.js';

const fromWeb = createRequire(path.resolve('web/package.json'));
const { JSDOM } = fromWeb('jsdom') as { JSDOM: new (html: string) => { window: Window & typeof globalThis } };

const assemble = (events: StreamEvent[]): AnswerState => events.reduce(applyStreamEvent, initialAnswer());

describe('stream assembly', () => {
  it("takes Socket.IO's whole text so far, and the final answer over what streamed", () => {
    const streamed = assemble([
      { kind: 'socket-chunk', prompt: 'Hel', delta: 'Hel' },
      { kind: 'socket-chunk', prompt: 'Hello wor', delta: 'lo wor' },
    ]);
    expect(streamed).toMatchObject({ text: 'Hello wor', status: 'streaming' });
    // A payload without prompt still carries its piece.
    expect(applyStreamEvent(streamed, { kind: 'socket-chunk', prompt: '', delta: 'ld' }).text).toBe('Hello world');
    const done = applyStreamEvent(streamed, { kind: 'complete', answer: 'Hello, world.', historyId: 'h1', conversationId: 'c1', credits: 2 });
    expect(done).toMatchObject({ text: 'Hello, world.', status: 'complete', historyId: 'h1', conversationId: 'c1', credits: 2, emptyNotice: false });
    // Nothing changes a settled answer.
    expect(applyStreamEvent(done, { kind: 'sse-chunk', delta: 'more' })).toBe(done);
  });

  it("appends SSE's pieces and keeps the latest status of each tool", () => {
    const state = assemble([
      { kind: 'tool', name: 'retrieval', status: 'started' },
      { kind: 'sse-chunk', delta: 'One ' },
      { kind: 'tool', name: 'retrieval', status: 'completed' },
      { kind: 'sse-chunk', delta: 'two.' },
    ]);
    expect(state.text).toBe('One two.');
    expect(state.tools).toEqual([{ name: 'retrieval', status: 'completed' }]);
  });

  it('turns the empty-answer notice into the try-again notice, not an answer', () => {
    const state = assemble([{ kind: 'complete', answer: EMPTY_ANSWER_NOTICE, historyId: 'h' }]);
    expect(state).toMatchObject({ text: '', emptyNotice: true, status: 'complete' });
  });

  it('stops taking pieces once stopped, and the final answer of the stopped turn settles it', () => {
    const stopped = assemble([{ kind: 'sse-chunk', delta: 'Half' }, { kind: 'stopped' }, { kind: 'sse-chunk', delta: ' more' }]);
    expect(stopped).toMatchObject({ text: 'Half', status: 'cancelled' });
    const settled = settleCancelled(stopped, { kind: 'complete', answer: 'Half an', historyId: 'h9', cancelled: true });
    expect(settled).toMatchObject({ text: 'Half an', status: 'cancelled', historyId: 'h9' });
  });

  it('keeps the failure to show it', () => {
    const error = new Error('boom');
    expect(assemble([{ kind: 'failed', error }])).toMatchObject({ status: 'failed', error });
  });
});

/** A socket link whose registrations and chunk listeners the test drives. */
function fakeLink(options: { failFirstReady?: boolean } = {}) {
  const listeners = new Set<(payload: ChunkPayload) => void>();
  const toolListeners = new Set<(payload: { name: string; status: string }) => void>();
  let socket = 0;
  const link: SocketLink & { reconnects: number; cancels: number; push(payload: ChunkPayload): void; pushTool(payload: { name: string; status: string }): void } = {
    reconnects: 0,
    cancels: 0,
    async ready() {
      if (options.failFirstReady) throw new Error('no socket');
      socket ||= 1;
      return `socket-${socket}`;
    },
    async reconnect() {
      link.reconnects++;
      socket++;
      return `socket-${socket}`;
    },
    onChunk(handler) {
      listeners.add(handler);
      return () => listeners.delete(handler);
    },
    onTool(handler) {
      toolListeners.add(handler);
      return () => toolListeners.delete(handler);
    },
    cancel() {
      link.cancels++;
    },
    push(payload) {
      for (const listener of listeners) listener(payload);
    },
    pushTool(payload) {
      for (const listener of toolListeners) listener(payload);
    },
  };
  return link;
}

function run(deps: AskDeps, question = 'Why is the sky blue?') {
  const events: AskEvent[] = [];
  const handle = ask(deps, { question, assistantId: 'a1', conversationId: 'c1' }, (event) => events.push(event));
  return { events, handle };
}

describe('asking with reconnect', () => {
  it('connects again after streamingFailed and sends the same question with the new socket', async () => {
    const link = fakeLink();
    const posted: Array<{ inputs: string[]; requestArgs: Record<string, unknown> }> = [];
    const answers: QandaJson[] = [
      { success: true, streamingFailed: true },
      { success: true, answer: 'Because of Rayleigh scattering.', historyId: 'h1', conversationId: 'c1', credits: 0, cancelled: false },
    ];
    const deps: AskDeps = {
      link,
      async postQanda(body) {
        posted.push(body);
        if (posted.length === 2) {
          link.pushTool({ name: 'retrieval', status: 'started' });
          link.push({ prompt: 'Because', delta: 'Because' });
        }
        return answers.shift()!;
      },
      streamSse: async () => expect.fail('no SSE while the socket works'),
    };
    const { events, handle } = run(deps);
    await handle.finished;
    expect(link.reconnects).toBe(1);
    expect(posted.map((body) => body.inputs)).toEqual([['Why is the sky blue?'], ['Why is the sky blue?']]);
    expect(posted.map((body) => body.requestArgs.socketId)).toEqual(['socket-1', 'socket-2']);
    expect(posted[1].requestArgs).toMatchObject({ assistantId: 'a1', conversationId: 'c1' });
    expect(events).toContainEqual({ kind: 'tool', name: 'retrieval', status: 'started' });
    const chunks = events.filter((event) => event.kind === 'socket-chunk');
    expect(chunks).toEqual([{ kind: 'socket-chunk', prompt: 'Because', delta: 'Because' }]);
    expect(events.at(-1)).toMatchObject({ kind: 'complete', answer: 'Because of Rayleigh scattering.', historyId: 'h1' });
    // The answer's listeners are gone with it: a later chunk reaches nothing.
    link.push({ prompt: 'stray', delta: 'stray' });
    link.pushTool({ name: 'x', status: 'started' });
    expect(events.at(-1)).toMatchObject({ kind: 'complete' });
  });

  it(`falls back to SSE after ${MAX_RECONNECTS} reconnects that did not help`, async () => {
    const link = fakeLink();
    let posts = 0;
    const sseBodies: unknown[] = [];
    const deps: AskDeps = {
      link,
      async postQanda() {
        posts++;
        return { success: true, streamingFailed: true };
      },
      async streamSse(body, _signal, emit) {
        sseBodies.push(body);
        emit({ kind: 'sse-chunk', delta: 'Over SSE.' });
        emit({ kind: 'complete', answer: 'Over SSE.', historyId: 'h2' });
      },
    };
    const { events, handle } = run(deps);
    await handle.finished;
    expect(posts).toBe(MAX_RECONNECTS + 1);
    expect(link.reconnects).toBe(MAX_RECONNECTS);
    expect(sseBodies).toEqual([{ inputs: ['Why is the sky blue?'], requestArgs: { assistant_id: 'a1', conversationId: 'c1', resumable: true } }]);
    expect(events.filter((event) => event.kind === 'transport')).toEqual([
      { kind: 'transport', transport: 'socket' },
      { kind: 'transport', transport: 'sse' },
    ]);
    expect(events.at(-1)).toMatchObject({ kind: 'complete', answer: 'Over SSE.' });
  });

  it('asks over SSE when the socket cannot register', async () => {
    const deps: AskDeps = {
      link: fakeLink({ failFirstReady: true }),
      postQanda: async () => expect.fail('no Socket.IO request without a socket'),
      async streamSse(_body, _signal, emit) {
        emit({ kind: 'complete', answer: 'ok' });
      },
    };
    const { events, handle } = run(deps);
    await handle.finished;
    expect(events.map((event) => event.kind)).toEqual(['transport', 'complete']);
  });

  it('stops a Socket.IO answer with cancel_request, and an SSE answer by closing the request', async () => {
    const link = fakeLink();
    let answer!: (value: QandaJson) => void;
    const socketRun = run({ link, postQanda: () => new Promise((resolve) => (answer = resolve)), streamSse: async () => undefined });
    await new Promise((resolve) => setTimeout(resolve, 0));
    socketRun.handle.stop();
    expect(link.cancels).toBe(1);
    answer({ success: true, answer: 'Partial', historyId: 'h3', cancelled: true });
    await socketRun.handle.finished;
    expect(socketRun.events.map((event) => event.kind)).toEqual(['transport', 'stopped', 'complete']);

    let aborted = false;
    const sseRun = run({
      link: null,
      postQanda: async () => expect.fail('no socket'),
      streamSse: (_body, signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new DOMException('aborted', 'AbortError'));
          }),
        ),
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    sseRun.handle.stop();
    await sseRun.handle.finished;
    expect(aborted).toBe(true);
    // A stop is not a failure.
    expect(sseRun.events.map((event) => event.kind)).toEqual(['transport', 'stopped']);
  });

  it('reports a refusal as a failure', async () => {
    const refusal = Object.assign(new Error('Not enough credits'), { status: 402 });
    const { events, handle } = run({ link: null, postQanda: async () => expect.fail(), streamSse: async () => Promise.reject(refusal) });
    await handle.finished;
    expect(events.at(-1)).toEqual({ kind: 'failed', error: refusal });
  });
});

describe('SSE frames', () => {
  it('reads data lines, skips heartbeats and broken frames, across chunk boundaries', async () => {
    const text = ': ping\n\ndata: {"type":"connected","message":"x"}\n\ndata: {"type":"stream","prompt":"a","delta":"a"}\r\n\r\ndata: not json\n\ndata: {"type":"done"}\n\n';
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 7) controller.enqueue(bytes.slice(at, at + 7));
        controller.close();
      },
    });
    const frames = [];
    for await (const frame of readSseFrames(body)) frames.push(frame.type);
    expect(frames).toEqual(['connected', 'stream', 'done']);
    expect(parseBlock(': only a comment')).toBeNull();
  });
});

describe('Markdown sanitizing', () => {
  const { render } = createMarkdownRenderer(new JSDOM('<!doctype html><html><body></body></html>').window);

  it('renders Markdown, with highlighted code and its copy button', () => {
    const html = render('**bold** and `code`\n\n```js\nconst x = 1;\n```');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code>code</code>');
    expect(html).toMatch(/<code class="hljs language-js"><span class="hljs-keyword">const<\/span>/);
    expect(html).toContain('data-copy="code"');
  });

  it('removes script, event handlers, javascript: links, frames, forms and styles from an answer', () => {
    const html = render(
      [
        '<script>alert(1)</script>',
        '<img src="x" onerror="alert(2)">',
        '[click](javascript:alert(3))',
        '<a href="JaVaScRiPt:alert(4)">x</a>',
        '<iframe src="https://evil.example"></iframe>',
        '<form action="https://evil.example"><input name="password"></form>',
        '<div style="position:fixed;inset:0">overlay</div>',
        '<svg><script>alert(5)</script></svg>',
        '<a href="data:text/html,<script>alert(6)</script>">d</a>',
      ].join('\n\n'),
    );
    for (const forbidden of ['<script', 'onerror', 'javascript:', 'JaVaScRiPt', '<iframe', '<form', '<input', 'style=', '<svg', 'data:text']) {
      expect(html.toLowerCase(), forbidden).not.toContain(forbidden.toLowerCase());
    }
    expect(html).toContain('overlay');
    expect(html).toContain('alt="Image from the answer"');
  });

  it('opens links in a new tab without access to this one', () => {
    const html = render('[docs](https://example.org/docs)');
    expect(html).toContain('href="https://example.org/docs"');
    expect(html).toContain('target="_blank"');
    expect(html).toContain('rel="noopener noreferrer nofollow"');
  });

  it('escapes HTML inside code blocks', () => {
    const html = render('```\n<script>alert(1)</script>\n```');
    expect(html).toContain('&lt;script&gt;');
    expect(html).not.toContain('<script>');
  });
});

describe('failures in words', () => {
  const failure = (status: number, body: Record<string, unknown>) => explainError(new ApiError(status, { success: false, ...body }));

  it('says what ran out or is capped, and what to do', () => {
    expect(failure(402, { code: 'INSUFFICIENT_CREDITS', message: 'Not enough credits' })).toEqual({
      title: 'Out of credits',
      detail: "Not enough credits. Ask your twin's administrator for more credits.",
    });
    const message = 'You have reached your daily usage limit for this Digital Twin. Please try again later.';
    expect(failure(429, { code: 'USAGE_LIMIT_REACHED', message, scope: 'user', limit: 0 })).toEqual({ title: 'Daily limit reached', detail: message });
    expect(failure(403, { code: 'FILE_LIMIT_REACHED', message: "You have reached this Digital Twin's limit of 1 files" })).toMatchObject({
      title: 'File limit reached',
      detail: expect.stringContaining('Delete a file you no longer need'),
    });
    expect(failure(403, { code: 'FILE_UPLOAD_DISABLED', message: 'File uploads are turned off for users of this Digital Twin' }).title).toBe('Uploads are turned off');
  });

  it('tells throttling (429) from a daily cap, and says to wait', () => {
    expect(failure(429, { code: 'RATE_LIMITED', message: 'Too many codes sent; sign in again later' })).toEqual({
      title: 'Too many attempts',
      detail: 'Too many codes sent; sign in again later. Wait a few minutes before you try again.',
    });
    // The rate limiter of any route answers the same code; a 429 without one still says to wait.
    expect(failure(429, {})).toEqual({ title: 'Too many attempts', detail: 'Wait a minute and try again.' });
  });

  it('offers the code challenge for a launch session (403 LAUNCH_SCOPE_STEP_UP) and keeps the twin', () => {
    const explained = failure(403, { code: 'LAUNCH_SCOPE_STEP_UP', message: 'Confirm with a code', institutionId: 'a'.repeat(24) });
    expect(explained).toMatchObject({ title: 'Confirm it is you', stepUp: { institutionId: 'a'.repeat(24) } });
    // Any other 403 says the service's reason, with no challenge.
    expect(failure(403, { message: 'Only administrators of this twin may share memories', code: 'MEMORY_ADMINS_ONLY' })).toEqual({
      title: 'Not allowed',
      detail: 'Only administrators of this twin may share memories',
    });
  });

  it("names the second factor's refusals", () => {
    expect(failure(400, { code: 'INVALID_CODE', message: 'Invalid code' }).title).toBe('That code is not right');
    expect(failure(400, { code: 'CODE_EXPIRED', message: 'This code has expired; ask for a new one' }).title).toBe('That code has expired');
    expect(failure(401, { code: 'MFA_EXPIRED', message: 'This sign-in has expired or ended; sign in again' }).detail).toContain('Start again');
    expect(failure(401, { code: 'INVALID_CREDENTIALS', message: 'Invalid email or password' }).title).toBe('Wrong email or password');
    expect(failure(401, { code: 'INVALID_LAUNCH_TOKEN', message: 'This launch token is invalid, used or expired' }).title).toBe('This link no longer works');
  });

  it('never leaves a person with a blank notice', () => {
    for (const status of [400, 401, 402, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503]) {
      const explained = failure(status, {});
      expect(explained.title.length, String(status)).toBeGreaterThan(3);
      expect(explained.detail.length, String(status)).toBeGreaterThan(3);
    }
    expect(explainError(new TypeError('Failed to fetch')).title).toBe('The service cannot be reached');
    expect(explainError(new Error('odd')).detail).toBe('odd');
  });
});
