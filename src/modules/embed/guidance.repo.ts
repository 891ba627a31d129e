// Guidance waiting for an embed session's next turn: the page adds it (POST /api/agent/embed/guide), the
// turn's context phase takes all that waits in one DELETE … RETURNING (so two turns racing on the same
// session never both follow it, and the text lives on only on the history record that followed it).
import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { newId } from '../../platform/ids/ids.js';
import type { GuidanceEntry } from '../history/history.tables.js';
import { embedGuidance } from './embed.tables.js';

export async function addGuidance(db: Executor, input: { twinId: string; sessionId: string; text: string }): Promise<void> {
  await db.insert(embedGuidance).values({ id: newId(), ...input });
}

/** Takes what waits on the session, oldest first, as the history record keeps it. */
export async function claimGuidance(db: Executor, input: { twinId: string; sessionId: string }): Promise<GuidanceEntry[]> {
  const rows = await db
    .delete(embedGuidance)
    .where(and(eq(embedGuidance.twinId, input.twinId), eq(embedGuidance.sessionId, input.sessionId)))
    .returning({ text: embedGuidance.text, at: embedGuidance.createdAt });
  return rows.sort((a, b) => a.at.getTime() - b.at.getTime()).map((row) => ({ text: row.text, at: row.at.toISOString() }));
}

