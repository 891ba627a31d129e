// Entitlements administration: super admins write them; a twin's administrators read those that apply
// to their twins (any other answers 404). Also what later features ask: the merged grant of a twin.
import type { Database, Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError, NotFoundError } from '../../platform/http/errors.js';
import { findTwinById } from '../twins/twins.repo.js';
import { checkAccess, requireAccess } from '../access/access.js';
import {
  activeEntitlementsOf,
  deleteEntitlements,
  findEntitlement,
  insertEntitlement,
  listEntitlements,
  updateEntitlement,
  type NewEntitlement,
} from './entitlements.repo.js';
import type { EntitlementInput, EntitlementWire } from './entitlements.schemas.js';
import type { EntitlementCaps, EntitlementRow } from './entitlements.tables.js';

const NOT_FOUND = 'Entitlement not found';

export function presentEntitlement(row: EntitlementRow): EntitlementWire {
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    institution: row.twinId,
    accountId: row.accountId,
    status: row.status,
    models: row.models,
    tools: row.tools,
    features: row.features,
    caps: row.caps,
    expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}

function toColumns(input: EntitlementInput): Partial<NewEntitlement> {
  const values: Partial<NewEntitlement> = {};
  if (input.name !== undefined) values.name = input.name;
  if (input.description !== undefined) values.description = input.description;
  if (input.institution !== undefined) values.twinId = input.institution;
  if (input.accountId !== undefined) values.accountId = input.accountId;
  if (input.status !== undefined) values.status = input.status;
  if (input.models !== undefined) values.models = input.models;
  if (input.tools !== undefined) values.tools = input.tools;
  if (input.features !== undefined) values.features = input.features;
  if (input.caps !== undefined) values.caps = input.caps;
  if (input.expiresAt !== undefined) values.expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
  return values;
}

/** What a twin may use: the union of its active entitlements; a cap is the most generous one given. */
export async function grantsOf(db: Executor, twinId: string) {
  const rows = await activeEntitlementsOf(db, twinId);
  const caps: EntitlementCaps = {};
  for (const row of rows) {
    for (const [key, value] of Object.entries(row.caps) as [keyof EntitlementCaps, number | null | undefined][]) {
      if (typeof value === 'number') caps[key] = Math.max(caps[key] ?? 0, value);
    }
  }
  const union = (pick: (row: EntitlementRow) => string[]) => [...new Set(rows.flatMap(pick))];
  return { entitled: rows.length > 0, models: union((r) => r.models), tools: union((r) => r.tools), features: union((r) => r.features), caps };
}

export function createEntitlementsService(db: Database) {
  const scope = (actor: Actor) => requireAccess(db, actor, 'twins.managed', { permission: 'institutions.list', ifNone: 'empty', withDeleted: true });

  async function checkTarget(values: Partial<NewEntitlement>, current?: EntitlementRow): Promise<void> {
    const twinId = values.twinId !== undefined ? values.twinId : current?.twinId ?? null;
    const accountId = values.accountId !== undefined ? values.accountId : current?.accountId ?? null;
    if (Boolean(twinId) === Boolean(accountId)) {
      throw new BadRequestError('Give either institution or accountId', 'TARGET_REQUIRED');
    }
    if (values.twinId && !(await findTwinById(db, values.twinId))) throw new NotFoundError('Institution not found');
  }

  return {
    async list(actor: Actor, query: { page: number; limit: number; search?: string; institution?: string }) {
      const twins = await scope(actor);
      const filter = query.institution ? (twins === 'all' || twins.includes(query.institution) ? [query.institution] : []) : twins;
      const { rows, total } = await listEntitlements(db, { twins: filter, search: query.search }, { offset: (query.page - 1) * query.limit, limit: query.limit });
      return { success: true as const, data: rows.map(presentEntitlement), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string) {
      const row = await findEntitlement(db, id, await scope(actor));
      if (!row) throw new NotFoundError(NOT_FOUND);
      return presentEntitlement(row);
    },

    async create(actor: Actor, input: EntitlementInput & { name: string }) {
      await requireAccess(db, actor, 'entitlement.edit', {});
      const values = toColumns(input);
      await checkTarget(values);
      return presentEntitlement(await insertEntitlement(db, { ...values, name: input.name, createdBy: actor.userId }));
    },

    async edit(actor: Actor, id: string, input: EntitlementInput) {
      const current = await findEntitlement(db, id, await scope(actor));
      if (!current) throw new NotFoundError(NOT_FOUND);
      await requireAccess(db, actor, 'entitlement.edit', {});
      const values = toColumns(input);
      await checkTarget(values, current);
      return presentEntitlement((await updateEntitlement(db, id, values)) ?? current);
    },

    async remove(actor: Actor, id: string) {
      const current = await findEntitlement(db, id, await scope(actor));
      if (!current) throw new NotFoundError(NOT_FOUND);
      await requireAccess(db, actor, 'entitlement.edit', {});
      await deleteEntitlements(db, [id]);
    },

    /** Behaviour 13: rows the caller may not delete are left alone (all of them, for a non-super). */
    async bulkDelete(actor: Actor, ids: string[]): Promise<number> {
      await requireAccess(db, actor, 'twins.managed', { permission: 'institutions.list', withDeleted: true });
      if (!(await checkAccess(db, actor, 'entitlement.edit', {}))) return 0;
      return deleteEntitlements(db, [...new Set(ids)]);
    },
  };
}

export type EntitlementsService = ReturnType<typeof createEntitlementsService>;
