// Behaviour 4: the working detail behind an answer expires 180 days after the conversation, measured
// from the conversation's last activity, so a conversation's records expire together. Text is replaced
// by "Details expired after 180 days"; counts, question, answer, models, usage and credits stay.
// Batched, idempotent (only rows not yet expired are picked), and safe on several workers at once
// (each batch locks its rows with FOR UPDATE SKIP LOCKED, so two workers never pick the same row).
import { and, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { Database } from '../../platform/db/client.js';
import { DETAIL_RETENTION_DAYS, DETAILS_EXPIRED_TEXT } from './history.detail.js';
import { conversations, history } from './history.tables.js';

const DAY_MS = 86_400_000;

/** The moment before which a conversation's last activity makes its detail expire. */
export function retentionCutoff(now: Date): Date {
  return new Date(now.getTime() - DETAIL_RETENTION_DAYS * DAY_MS);
}

/** Expires every record due at `now`, `batchSize` rows per statement; returns how many it expired. */
export async function expireWorkingDetail(db: Database, now: Date, batchSize: number, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    const expired = await expireBatch(db, now, batchSize);
    total += expired;
    // Until a batch finds nothing: rows another worker held locked are then done or still its own.
    if (expired === 0) return total;
  }
}

async function expireBatch(db: Database, now: Date, batchSize: number): Promise<number> {
  const marker = sql`${DETAILS_EXPIRED_TEXT}::text`;
  const due = db
    .select({ id: history.id })
    .from(history)
    .innerJoin(conversations, and(eq(conversations.twinId, history.twinId), eq(conversations.id, history.conversationId)))
    .where(and(isNull(history.detailsExpiredAt), lt(conversations.lastActivityAt, retentionCutoff(now))))
    .limit(batchSize)
    .for('update', { of: history, skipLocked: true });
  const rows = await db
    .update(history)
    .set({
      toolCalls: sql`coalesce((
        select jsonb_agg(e || jsonb_build_object('arguments', ${marker})
          || case when e -> 'result' is not null then jsonb_build_object('result', ${marker}) else '{}'::jsonb end
          order by i)
        from jsonb_array_elements(${history.toolCalls}) with ordinality as x(e, i)), '[]'::jsonb)`,
      subagents: sql`coalesce((
        select jsonb_agg(e || jsonb_build_object('task', ${marker}, 'transcript',
          case when jsonb_typeof(e -> 'transcript') = 'array' then coalesce((
            select jsonb_agg(m || jsonb_build_object('content', ${marker}) order by j)
            from jsonb_array_elements(e -> 'transcript') with ordinality as y(m, j)), '[]'::jsonb)
          else '[]'::jsonb end)
          order by i)
        from jsonb_array_elements(${history.subagents}) with ordinality as x(e, i)), '[]'::jsonb)`,
      ragSearch: sql`coalesce((
        select jsonb_agg(e || jsonb_build_object('chunkText', ${marker}) order by i)
        from jsonb_array_elements(${history.ragSearch}) with ordinality as x(e, i)), '[]'::jsonb)`,
      memories: sql`coalesce((
        select jsonb_agg(e || jsonb_build_object('value', ${marker}) order by i)
        from jsonb_array_elements(${history.memories}) with ordinality as x(e, i)), '[]'::jsonb)`,
      guidance: sql`coalesce((
        select jsonb_agg(e || jsonb_build_object('text', ${marker}) order by i)
        from jsonb_array_elements(${history.guidance}) with ordinality as x(e, i)), '[]'::jsonb)`,
      reasoning: sql`case when ${history.reasoning} is null or ${history.reasoning} = '' then ${history.reasoning} else ${marker} end`,
      detailsExpiredAt: now,
    })
    .where(and(inArray(history.id, due), isNull(history.detailsExpiredAt)))
    .returning({ id: history.id });
  return rows.length;
}
