// The process's answer frame log over the store of its shape: Redis Streams when the bus is Redis (on the
// bus's command connection, which the log does not close), else the in-memory ring of the embedded shape.
import type { EventBus } from './bus.js';
import type { SseFrame } from './client-frames.js';
import { createNullFrameStore, REDIS_FLUSH_MS, StreamLog, type FrameLines } from './stream-log.js';
import { createMemoryFrameStore } from './stream-log.memory.js';
import { createRedisFrameStore } from './stream-log.redis.js';

/** What the log keeps of an answer: its frames as SSE writes them, numbered by the log. */
export type AnswerLog = StreamLog<SseFrame>;

/** `keep` false (STREAM_LOG=off, for the bench only): frames are numbered and kept nowhere. */
export function openStreamLog(bus: Pick<EventBus, 'redis'>, retentionSeconds: number, onError?: (error: unknown) => void, keep = true): AnswerLog {
  const store = !keep ? createNullFrameStore() : bus.redis ? createRedisFrameStore(bus.redis, { lines: storedFrameLines }) : createMemoryFrameStore({ lines: storedFrameLines });
  return new StreamLog<SseFrame>(store, {
    retentionSeconds,
    onError: onError && ((error) => onError(error)),
    keep,
    encode: storedJsonOf,
    flushMs: bus.redis ? REDIS_FLUSH_MS : undefined,
  });
}

/**
 * A frame as the log keeps it: its JSON without the answer's historyId (a complete or an approval card
 * carries it; every replay adds `seq` and `historyId` to the stored text). A text piece (most of an
 * answer's frames) is written by hand, its text encoded once for prompt and delta.
 */
export function storedJsonOf(frame: SseFrame): string {
  if (frame.type === 'stream' && frame.prompt === frame.delta) return pieceJson(JSON.stringify(frame.delta));
  if (!('historyId' in frame)) return JSON.stringify(frame);
  const { historyId: _historyId, ...rest } = frame;
  return JSON.stringify(rest);
}

const PIECE_HEAD = '{"type":"stream","prompt":';
const PIECE_MIDDLE = ',"delta":';
/** A text piece's stored JSON from its text's JSON string: the one place its form is written. */
const pieceJson = (text: string): string => `${PIECE_HEAD}${text}${PIECE_MIDDLE}${text}}`;

/**
 * Stored frames as both stores keep them (the memory ring's lines, the Redis entries' field `l`): a text
 * piece (storedJsonOf's, most of an answer's frames) as its text's JSON string alone, which begins with
 * `"` where every frame's JSON begins with `{`. A piece of a token or two is about a seventh of its
 * frame's JSON, so the memory ring's bound holds more answers and Redis keeps less for each.
 */
export const storedFrameLines: FrameLines = {
  pack(json) {
    if (!json.startsWith(PIECE_HEAD) || json.charCodeAt(json.length - 1) !== 0x7d) return json;
    // `{"type":"stream","prompt":<text>,"delta":<text>}`: the two strings are as long as each other.
    const textLength = (json.length - PIECE_HEAD.length - PIECE_MIDDLE.length - 1) / 2;
    if (!Number.isInteger(textLength) || textLength < 2) return json;
    const middle = PIECE_HEAD.length + textLength;
    const text = json.slice(PIECE_HEAD.length, middle);
    return text.charCodeAt(0) === 0x22 && json.startsWith(PIECE_MIDDLE, middle) && json.startsWith(text, middle + PIECE_MIDDLE.length) ? text : json;
  },
  unpack(line) {
    return line.charCodeAt(0) === 0x22 ? pieceJson(line) : line;
  },
};

/** A stored frame as the SSE text the live stream sends: `id: <historyId>:<seq>` and its data with `seq` and `historyId` added. */
export function sseTextOfStored(historyId: string, seq: number, json: string): string {
  return `id: ${historyId}:${seq}\ndata: ${json.slice(0, -1)},"seq":${seq},"historyId":"${historyId}"}\n\n`;
}
