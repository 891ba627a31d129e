// Guidance waiting for an embed session's next turn: the page adds it (POST /api/agent/embed/guide), the
// turn's context phase claims all that waits, oldest first, in one statement (so two turns racing on the
// same session never both follow it) and keeps it on its history record.
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { newId } from '../../platform/ids/ids.js';
import type { GuidanceEntry } from '../history/history.tables.js';
import { embedGuidance } from './embed.tables.js';

export async function addGuidance(db: Executor, input: { twinId: string; sessionId: string; text: string }): Promise<void> {
  await db.insert(embedGuidance).values({ id: newId(), ...input });
}

/** Marks what waits on the session as taken by the turn `historyId`, and returns it as the record keeps it. */
export async function claimGuidance(db: Executor, input: { twinId: string; sessionId: string; historyId: string }): Promise<GuidanceEntry[]> {
  const rows = await db
    .update(embedGuidance)
    .set({ historyId: input.historyId })
    .where(and(eq(embedGuidance.twinId, input.twinId), eq(embedGuidance.sessionId, input.sessionId), isNull(embedGuidance.historyId)))
    .returning({ text: embedGuidance.text, at: embedGuidance.createdAt });
  return rows.sort((a, b) => a.at.getTime() - b.at.getTime()).map((row) => ({ text: row.text, at: row.at.toISOString() }));
}

