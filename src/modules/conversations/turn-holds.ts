// The sweeper of turns whose process died: a record still streaming long after any turn could run ends
// as failed and gives its hold back to the balance that pays (the same one statement as a turn's settle,
// charging nothing), so a crash never keeps credits out of reach. Job `turns.release-stale`, every minute.
import { and, asc, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import { finishValues } from '../history/history.records.js';
import { history } from '../history/history.tables.js';
import { finishAndCharge } from './turn-record.repo.js';

export const RELEASE_STALE_JOB = 'turns.release-stale';
const EVERY_MINUTE = '* * * * *';
/**
 * How old a streaming record must be before it counts as abandoned: longer than any turn runs (the
 * model's answer, tool calls and approvals of up to three minutes each). A turn that does settle later
 * still is charged, from what is spendable then.
 */
export const STALE_TURN_MS = 15 * 60 * 1000;
export const STALE_TURN_ERROR = 'The turn stopped without an answer: the process running it ended';
const BATCH = 200;

/** Ends the turns streaming since before `now - maxAgeMs`; answers how many it ended. */
export async function releaseStaleTurns(db: Database, now = new Date(), maxAgeMs = STALE_TURN_MS): Promise<number> {
  const stale = await db
    .select()
    .from(history)
    .where(and(eq(history.status, 'streaming'), lt(history.createdAt, new Date(now.getTime() - maxAgeMs))))
    .orderBy(asc(history.createdAt))
    .limit(BATCH);
  let ended = 0;
  for (const record of stale) {
    const outcome = finishValues(record, { answer: record.answer, status: 'failed', error: STALE_TURN_ERROR, at: now });
    const held = record.heldAccount ? record.heldCredits : 0;
    const account = record.heldAccount ?? 'user';
    // No version: whatever the record holds now (the statement checks it is still that hold, still streaming).
    const settled = await finishAndCharge(db, {
      record: { id: record.id },
      values: outcome.values,
      touchesConversation: outcome.touchesConversation,
      at: outcome.at,
      cost: 0,
      held,
      payer: { account, institutionId: record.institutionId, userId: record.userId },
      ledgerMeta: { historyId: record.id },
    });
    if (settled) ended++;
  }
  return ended;
}

export function defineTurnJobs(jobs: JobQueue, db: Database): void {
  jobs.define({
    name: RELEASE_STALE_JOB,
    schema: z.object({}).passthrough(),
    // Idempotent: a second run only finds what is still streaming.
    perform: async () => {
      await releaseStaleTurns(db);
    },
    retryLimit: 1,
    retryDelaySeconds: 30,
    expireInSeconds: 5 * 60,
  });
}

export async function scheduleTurnJobs(jobs: JobQueue): Promise<void> {
  await jobs.schedule(RELEASE_STALE_JOB, EVERY_MINUTE);
}
