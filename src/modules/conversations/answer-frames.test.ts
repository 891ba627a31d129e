// The producer's frames as readers get them: an SSE frame (a text piece written by hand) is the numbered
// frame, the same bytes as a resume writes from the log, and a socket event built from a frame and its numbering is the event of
// the numbered frame (what a resume sends), whatever the text holds.
import { describe, expect, it } from 'vitest';
import { StreamLog } from '../../platform/realtime/stream-log.js';
import { createMemoryFrameStore } from '../../platform/realtime/stream-log.memory.js';
import type { SseFrame } from '../../platform/realtime/client-frames.js';
import { AnswerFrames, socketEmitOf, socketEventOf, type NumberedFrame } from './answer-frames.js';
import { sseText } from './answer-resume.js';
import { sseFrames } from './sse-frames.js';

const HISTORY_ID = '65a1b2c3d4e5f60718293a4b';
const pieces = ['Hello', ' "quoted" \\ back', 'line\nbreak\ttab', 'é ü 漢字 🙂', '\u2028\u2029 </script>', '\u0000\u001f'];
const frames: SseFrame[] = [
  sseFrames.started(HISTORY_ID, '65a1b2c3d4e5f60718293a4c'),
  ...pieces.map((piece) => sseFrames.stream(piece)),
  sseFrames.tool('retrieval', 'completed'),
  sseFrames.complete({ usage: 12, outputs: ['Hello'], credits: 3, historyId: HISTORY_ID, conversationId: 'c' }),
  sseFrames.error('The provider failed', 'MODEL_FAILED'),
  sseFrames.done(),
];

describe('answer frames', () => {
  it('writes every frame on SSE as the numbered frame, with its event id, and as a resume writes it', async () => {
    const log = new StreamLog<SseFrame>(createMemoryFrameStore());
    const producer = new AnswerFrames(log, HISTORY_ID);
    const texts = frames.map((frame) => producer.sseText(frame));
    texts.forEach((text, i) => {
      const [idLine, dataLine, ...rest] = text.split('\n');
      expect(idLine).toBe(`id: ${HISTORY_ID}:${i + 1}`);
      expect(JSON.parse(dataLine.slice('data: '.length))).toEqual({ ...frames[i], seq: i + 1, historyId: HISTORY_ID });
      expect(rest).toEqual(['', '']);
    });
    // The log keeps the text the live stream was made from: a resume writes the same bytes.
    await log.flush();
    const stored = await log.store.read(HISTORY_ID, 0);
    expect(stored.kind === 'frames' && sseText(HISTORY_ID, stored.frames)).toBe(texts.join(''));
    await log.close();
  });

  it('builds each socket event from a frame and its numbering as from the numbered frame', () => {
    let text = '';
    frames.forEach((frame, i) => {
      if (frame.type === 'stream') text += frame.delta;
      const numbered: NumberedFrame = { ...frame, seq: i + 1, historyId: HISTORY_ID };
      expect(JSON.stringify(socketEventOf(frame, i + 1, HISTORY_ID, text))).toBe(JSON.stringify(socketEmitOf(numbered, text)));
    });
  });
});
