// Data access for assistants. Every function takes the executor it runs on (database or transaction).
import { and, asc, desc, eq, ilike, inArray, isNull, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import type { AssistantTarget } from '../access/access.js';
import { preparedOn } from '../../platform/db/prepared.js';
import { assistants, type AssistantRow, type AssistantStatus, type NewAssistant } from './assistants.tables.js';
import { pickableWhere, pickContextForActor, STANDARD_ASSISTANT_KEY, type PickContext } from './scope.js';

export async function findAssistantById(db: Executor, id: string): Promise<AssistantRow | undefined> {
  // A personal assistant its owner deleted with their data (deleted_at) is gone for everyone, admins included.
  const [row] = await db.select().from(assistants).where(and(eq(assistants.id, id), isNull(assistants.deletedAt))).limit(1);
  return row;
}

/** What requireAccess needs to judge one assistant: the row, and behaviour 1's answer, read only when the rule asks. */
export async function assistantTarget(
  db: Executor,
  actor: Actor,
  id: string,
  options: { includeDeleted?: boolean } = {},
): Promise<AssistantTarget & { assistant: AssistantRow | undefined }> {
  return {
    assistant: await findAssistantById(db, id),
    pickable: async () => Boolean(await findPickableAssistant(db, await pickContextForActor(db, actor), id)),
    includeDeleted: options.includeDeleted,
  };
}

export async function findPickableAssistant(db: Executor, ctx: PickContext, id: string): Promise<AssistantRow | undefined> {
  const [row] = await db.select().from(assistants).where(and(eq(assistants.id, id), pickableWhere(ctx))).limit(1);
  return row;
}

/** System assistants first (the standard one leading), then the rest by name. */
export function listPickableAssistants(db: Executor, ctx: PickContext, ids?: string[]): Promise<AssistantRow[]> {
  const where = ids ? and(pickableWhere(ctx), inArray(assistants.id, ids.length ? ids : ['']))! : pickableWhere(ctx);
  return db
    .select()
    .from(assistants)
    .where(where)
    .orderBy(
      desc(sql`coalesce(${assistants.systemKey} = ${STANDARD_ASSISTANT_KEY}, false)`),
      desc(sql`(${assistants.userId} is null and ${assistants.twinId} is null)`),
      asc(sql`lower(${assistants.name})`),
      asc(assistants.id),
    );
}

const standardQuery = (db: Executor) => db.select().from(assistants).where(eq(assistants.systemKey, STANDARD_ASSISTANT_KEY)).limit(1);

/** New Conversation, read on most turns: a prepared query outside transactions. */
export async function findStandardAssistant(db: Executor): Promise<AssistantRow | undefined> {
  const prepared = preparedOn(db, 'standard_assistant', (d) => standardQuery(d).prepare('standard_assistant'));
  const [row] = prepared ? await prepared.execute() : await standardQuery(db);
  return row;
}

export async function insertAssistant(db: Executor, values: NewAssistant): Promise<AssistantRow> {
  const [row] = await db.insert(assistants).values(values).returning();
  return row;
}

/** Inserts system assistants that are missing, keyed by systemKey; safe when several processes start at once. */
export async function insertSystemAssistants(db: Executor, rows: NewAssistant[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insert(assistants).values(rows).onConflictDoNothing({ target: assistants.systemKey });
}

export async function updateAssistant(db: Executor, id: string, values: Partial<NewAssistant>): Promise<AssistantRow | undefined> {
  const [row] = await db.update(assistants).set(values).where(eq(assistants.id, id)).returning();
  return row;
}

export interface AdminAssistantFilter {
  /** Twins whose assistants the caller may see; 'all' for a super admin (also system and personal ones). */
  twinIds: string[] | 'all';
  status?: AssistantStatus;
  twinId?: string;
  search?: string;
  page: number;
  limit: number;
}

function adminWhere(filter: AdminAssistantFilter): SQL | undefined {
  const parts: (SQL | undefined)[] = [isNull(assistants.deletedAt)];
  if (filter.twinIds !== 'all') {
    parts.push(filter.twinIds.length ? inArray(assistants.twinId, filter.twinIds) : sql`false`);
  }
  if (filter.status) parts.push(eq(assistants.status, filter.status));
  if (filter.twinId) parts.push(eq(assistants.twinId, filter.twinId));
  if (filter.search) {
    const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    parts.push(or(ilike(assistants.name, pattern), ilike(assistants.description, pattern)));
  }
  return and(...parts);
}

export async function listAssistantsForAdmin(db: Executor, filter: AdminAssistantFilter): Promise<{ rows: AssistantRow[]; total: number }> {
  const where = adminWhere(filter);
  const rows = await db
    .select()
    .from(assistants)
    .where(where)
    .orderBy(desc(assistants.createdAt), desc(assistants.id))
    .limit(filter.limit)
    .offset((filter.page - 1) * filter.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(assistants).where(where);
  return { rows, total: count.total };
}

/** Marks deleted those of `ids` in the given twins (any for 'all'), never the standard assistant. */
export async function markAssistantsDeleted(db: Executor, ids: string[], twinIds: string[] | 'all'): Promise<number> {
  if (ids.length === 0) return 0;
  const scope = twinIds === 'all' ? undefined : twinIds.length ? inArray(assistants.twinId, twinIds) : sql`false`;
  const rows = await db
    .update(assistants)
    .set({ status: 'deleted' })
    .where(
      and(
        inArray(assistants.id, ids),
        ne(assistants.status, 'deleted'),
        or(isNull(assistants.systemKey), ne(assistants.systemKey, STANDARD_ASSISTANT_KEY)),
        scope,
      ),
    )
    .returning({ id: assistants.id });
  return rows.length;
}
