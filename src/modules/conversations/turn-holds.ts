// The sweeper of turns whose process died: a record still streaming whose process is gone (unheard for
// PROCESS_TIMEOUT_SECONDS, or stopped; on PGlite every process before this one) ends as failed, marked
// interrupted, with the part of the answer saved while it streamed (turn-journal.ts), and gives its hold
// back to the balance that pays (turn-end.ts, the way every record ends, charging nothing), so a
// crash never keeps credits out of reach. It runs at start and after each liveness beat of every
// process; as a backstop, job `turns.release-stale` every minute also ends any record streaming for
// longer than any turn runs. Given the process's frame log, the sweep also ends each such answer's stream
// with the INTERRUPTED error and done, so its readers (any process) stop waiting.
import { and, asc, eq, lt, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ProcessLiveness } from '../../platform/processes/liveness.js';
import { history } from '../history/history.tables.js';
import { endAbandoned } from './turn-end.js';
import type { AnswerLog } from '../../platform/realtime/open-stream-log.js';
import { sseFrames } from './sse-frames.js';

export const RELEASE_STALE_JOB = 'turns.release-stale';
const releaseStalePayload = z.object({}).passthrough();

declare module '../../platform/jobs/queue.js' {
  interface Jobs {
    'turns.release-stale': z.infer<typeof releaseStalePayload>;
  }
}
const EVERY_MINUTE = '* * * * *';
/**
 * How old a streaming record must be before it counts as abandoned: longer than any turn runs (the
 * model's answer, tool calls and approvals of up to three minutes each). A turn that does settle later
 * still is charged, from what is spendable then.
 */
export const STALE_TURN_MS = 15 * 60 * 1000;
export const STALE_TURN_ERROR = 'The turn stopped without an answer: the process running it ended';
/** What a person reads on an answer cut short by a crash; the answer keeps the part that was sent (saved about every second). */
export const INTERRUPTED_TURN_ERROR = 'Interrupted: the service stopped while answering. The part of the answer sent before is kept; nothing was charged.';
const BATCH = 200;
/** The code of the error frame an answer cut short by its process's death ends with. */
export const INTERRUPTED_CODE = 'INTERRUPTED';

/** The two frames such an answer ends with: the sweep logs them for its readers, a resume answers them. */
export const interruptedFrames = () => [sseFrames.error(INTERRUPTED_TURN_ERROR, INTERRUPTED_CODE), sseFrames.done()];

export interface GoneProcesses {
  /** This process: its own turns are never swept here. */
  selfId?: string;
  timeoutSeconds: number;
}

/**
 * Ends the turns streaming since before `now - maxAgeMs`, and, given `gone`, those whose process is gone;
 * answers how many it ended.
 */
export async function releaseStaleTurns(db: Database, now = new Date(), maxAgeMs = STALE_TURN_MS, gone?: GoneProcesses, streamLog?: Pick<AnswerLog, 'endOrphan'>): Promise<number> {
  const processGone = gone
    ? sql<boolean>`(${history.processId} is not null and ${history.processId} <> ${gone.selfId ?? ''} and not exists (select 1 from service_processes p where p.id = ${history.processId} and p.seen_at > now() - ${gone.timeoutSeconds} * interval '1 second'))`
    : sql<boolean>`false`;
  const stale = await db
    .select({ record: history, interrupted: processGone })
    .from(history)
    .where(and(eq(history.status, 'streaming'), or(lt(history.createdAt, new Date(now.getTime() - maxAgeMs)), processGone)))
    .orderBy(asc(history.createdAt))
    .limit(BATCH);
  let ended = 0;
  for (const { record, interrupted } of stale) {
    if (!(await endAbandoned(db, record, interrupted ? INTERRUPTED_TURN_ERROR : STALE_TURN_ERROR, now))) continue;
    ended++;
    // Its readers, on any process, get the INTERRUPTED error and done (unless the answer's log had ended).
    await streamLog?.endOrphan(record.id, interruptedFrames()).catch(() => null);
  }
  return ended;
}

/** Sweeps the turns of gone processes now and after each beat of this process's liveness. */
export function sweepInterruptedTurns(
  db: Database,
  liveness: ProcessLiveness,
  log?: { error(o: object, m?: string): void },
  streamLog?: Pick<AnswerLog, 'endOrphan'>,
): () => void {
  const sweep = async () => {
    await releaseStaleTurns(db, new Date(), STALE_TURN_MS, { selfId: liveness.id, timeoutSeconds: liveness.timeoutSeconds }, streamLog);
  };
  sweep().catch((err: unknown) => log?.error({ err }, 'sweep of interrupted turns failed'));
  return liveness.onBeat(sweep);
}

export function defineTurnJobs(jobs: JobQueue, db: Database, streamLog?: Pick<AnswerLog, 'endOrphan'>): void {
  jobs.define({
    name: RELEASE_STALE_JOB,
    schema: releaseStalePayload,
    // Idempotent: a second run only finds what is still streaming.
    perform: async () => {
      await releaseStaleTurns(db, new Date(), STALE_TURN_MS, undefined, streamLog);
    },
    retryLimit: 1,
    retryDelaySeconds: 30,
    expireInSeconds: 5 * 60,
  });
}

export async function scheduleTurnJobs(jobs: JobQueue): Promise<void> {
  await jobs.schedule(RELEASE_STALE_JOB, EVERY_MINUTE);
}
