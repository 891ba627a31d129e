// Data access for custom AI models. Every function takes the executor it runs on.
import { and, asc, desc, eq, ilike, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { customModels, type CustomModelRow, type NewCustomModel } from './custom-models.tables.js';

export async function findCustomModelById(db: Executor, id: string): Promise<CustomModelRow | undefined> {
  const [row] = await db.select().from(customModels).where(eq(customModels.id, id)).limit(1);
  return row;
}

export async function insertCustomModel(db: Executor, values: NewCustomModel): Promise<CustomModelRow> {
  const [row] = await db.insert(customModels).values(values).returning();
  return row;
}

export async function updateCustomModel(db: Executor, id: string, values: Partial<NewCustomModel>): Promise<CustomModelRow | undefined> {
  if (!setsSomething(values)) return findCustomModelById(db, id);
  const [row] = await db.update(customModels).set(values).where(eq(customModels.id, id)).returning();
  return row;
}

/** Rows of the twins given (any for 'all'); deployment-wide rows only when includeGlobal. */
function twinScope(twins: string[] | 'all', includeGlobal: boolean): SQL | undefined {
  if (twins === 'all') return undefined;
  const parts: SQL[] = [];
  if (twins.length) parts.push(inArray(customModels.twinId, twins));
  if (includeGlobal) parts.push(isNull(customModels.twinId));
  return parts.length ? or(...parts) : sql`false`;
}

export async function deleteCustomModels(db: Executor, ids: string[], twins: string[] | 'all'): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await db
    .delete(customModels)
    .where(and(inArray(customModels.id, ids), twinScope(twins, false)))
    .returning({ id: customModels.id });
  return rows.length;
}

export async function listCustomModelsForAdmin(
  db: Executor,
  filter: { twins: string[] | 'all'; twinId?: string; search?: string; page: number; limit: number },
): Promise<{ rows: CustomModelRow[]; total: number }> {
  const parts: (SQL | undefined)[] = [twinScope(filter.twins, true)];
  if (filter.twinId) parts.push(eq(customModels.twinId, filter.twinId));
  if (filter.search) {
    const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    parts.push(or(ilike(customModels.name, pattern), ilike(customModels.model, pattern)));
  }
  const where = and(...parts);
  const rows = await db
    .select()
    .from(customModels)
    .where(where)
    .orderBy(desc(customModels.createdAt), desc(customModels.id))
    .limit(filter.limit)
    .offset((filter.page - 1) * filter.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(customModels).where(where);
  return { rows, total: count.total };
}

/** Active models of a twin and deployment-wide ones; a twin's model hides a deployment-wide one of the same name. */
export async function listAvailableModels(db: Executor, twinId: string | null): Promise<CustomModelRow[]> {
  const place = twinId ? or(eq(customModels.twinId, twinId), isNull(customModels.twinId)) : isNull(customModels.twinId);
  const rows = await db
    .select()
    .from(customModels)
    .where(and(eq(customModels.status, 'active'), place))
    .orderBy(asc(sql`lower(${customModels.name})`), sql`${customModels.twinId} is null`);
  const seen = new Set<string>();
  return rows.filter((row) => {
    const key = row.name.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The active model a turn names (by name, else by provider model id), the twin's before a deployment-wide one. */
export async function findAvailableModel(db: Executor, twinId: string | null, modelName: string): Promise<CustomModelRow | undefined> {
  const place = twinId ? or(eq(customModels.twinId, twinId), isNull(customModels.twinId)) : isNull(customModels.twinId);
  const [row] = await db
    .select()
    .from(customModels)
    .where(
      and(
        eq(customModels.status, 'active'),
        place,
        or(sql`lower(${customModels.name}) = ${modelName.toLowerCase()}`, eq(customModels.model, modelName)),
      ),
    )
    .orderBy(
      sql`lower(${customModels.name}) = ${modelName.toLowerCase()} desc`,
      sql`${customModels.twinId} is null`,
    )
    .limit(1);
  return row;
}
