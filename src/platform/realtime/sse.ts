// A Server-Sent Events writer for Fastify routes: takes the response over (reply.hijack) while
// keeping the headers plugins already set (CORS, helmet, request id), writes `data: <JSON>` frames,
// sends comment heartbeats so idle proxies keep the stream, and tells the route when the client left.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SseFrame } from './client-frames.js';

export const DEFAULT_HEARTBEAT_MS = 15_000;

export interface SseOptions<F extends object = SseFrame> {
  /** Interval of `: ping` comment lines; 0 turns them off. */
  heartbeatMs?: number;
  /** A frame the stream opens with: it leaves with the headers, in the same write. */
  first?: F;
}

/** A stream of the frames of the client frame map (F: another set, for tests of the writer itself). */
export interface SseStream<F extends object = SseFrame> {
  /**
   * Writes one frame `data: <JSON>\n\n` (after `id: <eventId>` when given: what a reconnecting client
   * sends back as Last-Event-ID); returns false (and writes nothing) once the stream is closed.
   */
  send(frame: F, eventId?: string): boolean;
  /** Writes a frame already encoded as SSE text (`id:` and `data:` lines, the blank line); false once closed. */
  sendText(text: string): boolean;
  /** Ends the response; idempotent. */
  close(): void;
  /** Aborted when the client goes away before close() (the route cancels its work then). */
  readonly signal: AbortSignal;
  /** True after close() or after the client went away. */
  readonly closed: boolean;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // nginx and similar proxies would otherwise buffer the stream.
  'x-accel-buffering': 'no',
} as const;

export function openSse<F extends object = SseFrame>(request: FastifyRequest, reply: FastifyReply, options: SseOptions<F> = {}): SseStream<F> {
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const res = reply.raw;
  const controller = new AbortController();
  let closed = false;

  // Headers set by hooks so far live on the reply, not on the raw response: hijacking without
  // copying them would drop CORS and the rest.
  const headers: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && name.toLowerCase() !== 'content-length') headers[name] = value;
  }
  reply.hijack();
  // Small frames must leave at once, not wait for Nagle's algorithm.
  request.raw.socket?.setNoDelay(true);
  res.writeHead(200, { ...headers, ...SSE_HEADERS });
  // The headers leave at once: with the first frame when there is one (one write, not two), else alone.
  if (options.first) res.write(sseDataOf(options.first));
  else res.flushHeaders();

  const heartbeat =
    heartbeatMs > 0
      ? setInterval(() => {
          if (!closed) res.write(': ping\n\n');
        }, heartbeatMs)
      : undefined;

  const finish = (): void => {
    if (closed) return;
    closed = true;
    if (heartbeat) clearInterval(heartbeat);
  };

  // The response closes when we end it or when the connection drops; only the latter is an abort.
  res.on('close', () => {
    const clientLeft = !res.writableFinished;
    finish();
    if (clientLeft) controller.abort(new DOMException('The client closed the stream', 'AbortError'));
  });
  res.on('error', () => finish());

  return {
    send(body, eventId) {
      if (closed || res.destroyed) return false;
      res.write(eventId === undefined ? sseDataOf(body) : `id: ${eventId}\n${sseDataOf(body)}`);
      return true;
    },
    sendText(text) {
      if (closed || res.destroyed) return false;
      res.write(text);
      return true;
    },
    close() {
      if (closed) return;
      finish();
      if (!res.destroyed) res.end();
    },
    signal: controller.signal,
    get closed() {
      return closed;
    },
  };
}

/** A frame's `data:` line and the blank line after it. */
export const sseDataOf = (body: object): string => `data: ${JSON.stringify(body)}\n\n`;
