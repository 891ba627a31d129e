// Running answers controlled from any process (contract: resumable answers): an explicit cancel
// (POST /api/ai/stream/{historyId}/cancel, any tab) and the count of readers that resumed an answer (a
// resumable answer whose SSE request closed goes on while one reads it, and RESUME_GRACE_SECONDS without
// any). Both cross the event bus; the process producing the answer listens for its own answers only.
import { z } from 'zod';
import type { EventBus } from '../../platform/realtime/bus.js';

export const ANSWER_CANCEL_CHANNEL = 'answer.cancel';
export const ANSWER_READERS_CHANNEL = 'answer.readers';

const cancelMessage = z.object({ historyId: z.string() });
const readersMessage = z.object({ historyId: z.string(), change: z.union([z.literal(1), z.literal(-1)]) });

declare module '../../platform/realtime/bus.js' {
  interface BusEvents {
    'answer.cancel': z.infer<typeof cancelMessage>;
    'answer.readers': z.infer<typeof readersMessage>;
  }
}

export interface RunningAnswer {
  /** Stop the answer as cancel_request does (the part generated is recorded and charged). */
  cancel(): void;
  /** Readers that resumed it, on any process, joined (+1) or left (-1). */
  readers?(change: 1 | -1): void;
}

export interface AnswerControl {
  /** An answer this process produces; the returned function forgets it. */
  register(historyId: string, answer: RunningAnswer): () => void;
  /** Asks the process producing the answer, wherever it is, to cancel it. */
  cancel(historyId: string): Promise<void>;
  /** A reader follows the answer from now until the returned function is called. */
  reading(historyId: string): () => void;
  close(): Promise<void>;
}

export async function createAnswerControl(bus: EventBus, log?: { warn(o: object, m: string): void }): Promise<AnswerControl> {
  const running = new Map<string, RunningAnswer>();
  const offCancel = await bus.subscribe(ANSWER_CANCEL_CHANNEL, ({ historyId }) => running.get(historyId)?.cancel(), { schema: cancelMessage });
  const offReaders = await bus.subscribe(ANSWER_READERS_CHANNEL, ({ historyId, change }) => running.get(historyId)?.readers?.(change), {
    schema: readersMessage,
  });
  const publishReaders = (historyId: string, change: 1 | -1) =>
    void bus.publish(ANSWER_READERS_CHANNEL, { historyId, change }).catch((err: unknown) => log?.warn({ err }, 'answer reader count not sent'));

  return {
    register(historyId, answer) {
      running.set(historyId, answer);
      return () => {
        if (running.get(historyId) === answer) running.delete(historyId);
      };
    },
    async cancel(historyId) {
      await bus.publish(ANSWER_CANCEL_CHANNEL, { historyId });
    },
    reading(historyId) {
      publishReaders(historyId, 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        publishReaders(historyId, -1);
      };
    },
    async close() {
      await Promise.all([offCancel(), offReaders()]).catch(() => {});
      running.clear();
    },
  };
}
