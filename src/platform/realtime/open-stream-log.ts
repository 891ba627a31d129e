// The process's answer frame log over the store of its shape: Redis Streams when the bus is Redis (on the
// bus's command connection, which the log does not close), else the in-memory ring of the embedded shape.
import type { EventBus } from './bus.js';
import type { SseFrame } from './client-frames.js';
import { createNullFrameStore, StreamLog } from './stream-log.js';
import { createMemoryFrameStore } from './stream-log.memory.js';
import { createRedisFrameStore } from './stream-log.redis.js';

/** What the log keeps of an answer: its frames as SSE writes them, numbered by the log. */
export type AnswerLog = StreamLog<SseFrame>;

/** `keep` false (STREAM_LOG=off, for the bench only): frames are numbered and kept nowhere. */
export function openStreamLog(bus: Pick<EventBus, 'redis'>, retentionSeconds: number, onError?: (error: unknown) => void, keep = true): AnswerLog {
  const store = !keep ? createNullFrameStore() : bus.redis ? createRedisFrameStore(bus.redis) : createMemoryFrameStore();
  return new StreamLog<SseFrame>(store, { retentionSeconds, onError: onError && ((error) => onError(error)), keep });
}
