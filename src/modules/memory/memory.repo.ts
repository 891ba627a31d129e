// Data access for memory parameters. Every read names the twin (institution_id first, as the
// indexes do); list reads join the twin's summary the wire shape carries. No read returns a row its
// author deleted (deleted_at, personal-data delete): it waits for the purge.
import { and, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { executeShaped } from '../../platform/db/prepared.js';
import { twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { memoryParameters, type MemoryRow, type NewMemory } from './memory.tables.js';

export interface TwinSummary {
  id: string;
  name: string;
  ainame: string;
  picture: string;
}

export interface MemoryWithTwin extends MemoryRow {
  twin: TwinSummary;
}

export type MemoryUpdate = Partial<Pick<NewMemory, 'keyValue' | 'keyDescription' | 'shared'>>;

/** Rows a person sees in a twin: their personal rows (when `personal`) and the twin's shared rows. */
export function visibleWhere(twinId: string, userId: string, personal = true): SQL {
  const mine = and(eq(memoryParameters.userId, userId), eq(memoryParameters.shared, false));
  return and(eq(memoryParameters.twinId, twinId), isNull(memoryParameters.deletedAt), personal ? or(eq(memoryParameters.shared, true), mine) : eq(memoryParameters.shared, true))!;
}

function selectWithTwin(db: Executor) {
  return db
    .select({
      row: memoryParameters,
      twin: { id: twins.id, name: twins.name, ainame: twins.ainame, picture: twins.picture },
    })
    .from(memoryParameters)
    .innerJoin(twins, eq(twins.id, memoryParameters.twinId));
}

export async function listVisibleMemories(db: Executor, twinId: string, userId: string, limit: number): Promise<MemoryWithTwin[]> {
  const rows = await selectWithTwin(db)
    .where(visibleWhere(twinId, userId))
    .orderBy(desc(memoryParameters.createdAt), desc(memoryParameters.id))
    .limit(limit);
  return rows.map(({ row, twin }) => ({ ...row, twin }));
}

/** One row of the twin, whoever wrote it; the service decides whether the caller may see it. */
export async function findMemory(db: Executor, twinId: string, id: string): Promise<MemoryWithTwin | undefined> {
  const [found] = await selectWithTwin(db)
    .where(and(eq(memoryParameters.twinId, twinId), eq(memoryParameters.id, id), isNull(memoryParameters.deletedAt)))
    .limit(1);
  return found ? { ...found.row, twin: found.twin } : undefined;
}

export async function insertMemory(db: Executor, values: NewMemory): Promise<MemoryRow> {
  const [row] = await db.insert(memoryParameters).values(values).returning();
  return row;
}

export async function updateMemory(db: Executor, twinId: string, id: string, values: MemoryUpdate): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await db
    .update(memoryParameters)
    .set(values)
    .where(and(eq(memoryParameters.twinId, twinId), eq(memoryParameters.id, id)));
}

export async function deleteMemory(db: Executor, twinId: string, id: string): Promise<void> {
  await db.delete(memoryParameters).where(and(eq(memoryParameters.twinId, twinId), eq(memoryParameters.id, id)));
}

/**
 * What a turn may recall: shared rows of the twin, and the person's personal rows when `personal` (or,
 * with 'as-set', while the person's Enable User Memory switch is on, read by this same statement).
 * Every turn reads it: prepared once per shape (drizzle took longer to build it than the database to run it).
 */
export async function listRecallable(db: Executor, twinId: string, userId: string, personal: boolean | 'as-set', limit: number): Promise<MemoryRow[]> {
  return executeShaped(db, `recallable:${personal}`, (d, param) => recallableQuery(d, personal, param), { twinId, userId, limit });
}

function recallableQuery(db: Executor, personal: boolean | 'as-set', param: (name: string) => unknown) {
  const shared = eq(memoryParameters.shared, true);
  const mine = and(eq(memoryParameters.userId, param('userId') as string), eq(memoryParameters.shared, false));
  const switchOn = sql`exists (select 1 from ${users} where ${users.id} = ${param('userId')} and ${users.userMemoryEnabled})`;
  const which = personal === 'as-set' ? or(shared, and(mine, switchOn)) : personal ? or(shared, mine) : shared;
  return db
    .select()
    .from(memoryParameters)
    .where(and(eq(memoryParameters.twinId, param('twinId') as string), isNull(memoryParameters.deletedAt), which))
    .orderBy(desc(memoryParameters.updatedAt), desc(memoryParameters.id))
    .limit(param('limit') as number);
}

/** A person's personal rows of one namespace in a twin (long-term memory merges against these). */
export async function listPersonalInNamespace(db: Executor, twinId: string, userId: string, namespace: string): Promise<MemoryRow[]> {
  return db
    .select()
    .from(memoryParameters)
    .where(
      and(
        eq(memoryParameters.twinId, twinId),
        eq(memoryParameters.userId, userId),
        eq(memoryParameters.shared, false),
        eq(memoryParameters.keyNamespace, namespace),
        isNull(memoryParameters.deletedAt),
      ),
    )
    .orderBy(desc(memoryParameters.updatedAt));
}
