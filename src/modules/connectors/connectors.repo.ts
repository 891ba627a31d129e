// Data access for connectors (MCP servers) and a twin's toolsDisabled list. Every function takes the
// executor it runs on.
import { and, asc, desc, eq, ilike, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { twins } from '../twins/twins.tables.js';
import { mcpServers, type McpServerRow, type NewMcpServer } from './connectors.tables.js';

export async function findMcpServerById(db: Executor, id: string): Promise<McpServerRow | undefined> {
  const [row] = await db.select().from(mcpServers).where(eq(mcpServers.id, id)).limit(1);
  return row;
}

export async function insertMcpServer(db: Executor, values: NewMcpServer): Promise<McpServerRow> {
  const [row] = await db.insert(mcpServers).values(values).returning();
  return row;
}

export async function updateMcpServer(db: Executor, id: string, values: Partial<NewMcpServer>): Promise<McpServerRow | undefined> {
  if (!setsSomething(values)) return findMcpServerById(db, id);
  const [row] = await db.update(mcpServers).set(values).where(eq(mcpServers.id, id)).returning();
  return row;
}

/** Rows of the twins given (any for 'all'); servers of every twin only when includeGlobal. */
function twinScope(twinIds: string[] | 'all', includeGlobal: boolean): SQL | undefined {
  if (twinIds === 'all') return undefined;
  const parts: SQL[] = [];
  if (twinIds.length) parts.push(inArray(mcpServers.twinId, twinIds));
  if (includeGlobal) parts.push(isNull(mcpServers.twinId));
  return parts.length ? or(...parts) : sql`false`;
}

/** Deletes those of ids in the twins given (servers of every twin only for 'all'); answers the deleted ids. */
export async function deleteMcpServers(db: Executor, ids: string[], twinIds: string[] | 'all'): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .delete(mcpServers)
    .where(and(inArray(mcpServers.id, ids), twinScope(twinIds, false)))
    .returning({ id: mcpServers.id });
  return rows.map((row) => row.id);
}

export async function listMcpServersForAdmin(
  db: Executor,
  filter: { twins: string[] | 'all'; twinId?: string; search?: string; page: number; limit: number },
): Promise<{ rows: McpServerRow[]; total: number }> {
  const parts: (SQL | undefined)[] = [twinScope(filter.twins, true)];
  if (filter.twinId) parts.push(eq(mcpServers.twinId, filter.twinId));
  if (filter.search) {
    const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    parts.push(or(ilike(mcpServers.name, pattern), ilike(mcpServers.url, pattern)));
  }
  const where = and(...parts);
  const rows = await db
    .select()
    .from(mcpServers)
    .where(where)
    .orderBy(desc(mcpServers.createdAt), desc(mcpServers.id))
    .limit(filter.limit)
    .offset((filter.page - 1) * filter.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(mcpServers).where(where);
  return { rows, total: count.total };
}

/** The active servers a twin's turns may use: its own and those of every twin, the twin's first, oldest first. */
export async function listActiveServers(db: Executor, twinId: string): Promise<McpServerRow[]> {
  return db
    .select()
    .from(mcpServers)
    .where(and(eq(mcpServers.status, 'active'), or(eq(mcpServers.twinId, twinId), isNull(mcpServers.twinId))))
    .orderBy(sql`${mcpServers.twinId} is null`, asc(mcpServers.createdAt), asc(mcpServers.id));
}

/** Adds the tool to the twin's toolsDisabled, or takes it out, in one statement; answers the new list. */
export async function setToolDisabled(db: Executor, twinId: string, name: string, disabled: boolean): Promise<string[] | undefined> {
  const entry = sql`jsonb_build_array(${name}::text)`;
  const next = disabled
    ? sql`case when ${twins.toolsDisabled} @> ${entry} then ${twins.toolsDisabled} else ${twins.toolsDisabled} || ${entry} end`
    : sql`coalesce((select jsonb_agg(item) from jsonb_array_elements(${twins.toolsDisabled}) item where item <> to_jsonb(${name}::text)), '[]'::jsonb)`;
  const [row] = await db
    .update(twins)
    .set({ toolsDisabled: next })
    .where(eq(twins.id, twinId))
    .returning({ toolsDisabled: twins.toolsDisabled });
  return row?.toolsDisabled;
}
