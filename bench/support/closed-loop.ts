// The load shape of bench/stream-overhead: N clients in a closed loop, each asking again as soon as its
// answer completes, their first starts spread evenly over one answer's duration (so turns arrive
// steadily, about N per answer's duration, as many people chatting do, rather than in waves). Turns
// started during the ramp are warm-up; those started within the measured window are kept.
import type { Timing } from './stream-clients.js';

export interface LoopResult {
  turns: Timing[];
  errors: string[];
  /** Turns started in the window, per second. */
  rate: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function closedLoop(clients: number, answerMs: number, windowMs: number, run: (client: number) => Promise<Timing>): Promise<LoopResult> {
  const t0 = performance.now();
  const from = t0 + answerMs;
  const to = from + windowMs;
  const turns: Timing[] = [];
  const errors: string[] = [];
  let started = 0;
  const client = async (i: number) => {
    await sleep((i * answerMs) / clients);
    while (performance.now() < to) {
      const startedAt = performance.now();
      const counted = startedAt >= from;
      if (counted) started++;
      try {
        const timing = await run(i);
        if (counted) turns.push(timing);
      } catch (error) {
        if (counted) errors.push(error instanceof Error ? error.message : String(error));
        await sleep(answerMs); // a failing service is not hammered in a tight loop
      }
    }
  };
  // A turn still open a minute after the window is a hang, not a slow answer.
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`closed loop of ${clients} clients did not finish (${turns.length} turns done)`)), answerMs + windowMs + 60_000);
  });
  try {
    await Promise.race([Promise.all(Array.from({ length: clients }, (_, i) => client(i))), limit]);
  } finally {
    clearTimeout(timer);
  }
  return { turns, errors, rate: started / (windowMs / 1000) };
}
