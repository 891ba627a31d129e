// Data access for third-party sign-in: in-flight requests, bound identities and twins' SSO providers.
import { and, desc, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { oauthStates, oidcIdentities, ssoProviders, type SsoProviderRow } from './oauth.tables.js';

export async function insertState(db: Executor, values: typeof oauthStates.$inferInsert): Promise<void> {
  await db.insert(oauthStates).values(values);
}

/** Claims the in-flight request once: a replayed callback finds nothing. */
export async function consumeState(db: Executor, stateHash: string) {
  const now = new Date();
  const [row] = await db
    .update(oauthStates)
    .set({ consumedAt: now })
    .where(and(eq(oauthStates.stateHash, stateHash), isNull(oauthStates.consumedAt), gt(oauthStates.expiresAt, now)))
    .returning();
  return row;
}

/** The identity made through this provider record for the issuer's subject. */
export async function findIdentity(db: Executor, provider: string, issuer: string, subject: string) {
  const [row] = await db
    .select()
    .from(oidcIdentities)
    .where(and(eq(oidcIdentities.provider, provider), eq(oidcIdentities.issuer, issuer), eq(oidcIdentities.subject, subject)))
    .limit(1);
  return row;
}

/** An identity made before identities had a provider record (provider null, migration 0019). */
export async function findLegacyIdentity(db: Executor, issuer: string, subject: string) {
  const [row] = await db
    .select()
    .from(oidcIdentities)
    .where(and(isNull(oidcIdentities.provider), eq(oidcIdentities.issuer, issuer), eq(oidcIdentities.subject, subject)))
    .limit(1);
  return row;
}

export interface NewIdentity {
  userId: string;
  provider: string;
  issuer: string;
  subject: string;
}

/** Binds the subject to the person through this provider record; a second binding of the same key is a no-op. */
export async function insertIdentity(db: Executor, values: NewIdentity): Promise<void> {
  await db.insert(oidcIdentities).values(values).onConflictDoNothing();
}

export async function findSsoProvider(db: Executor, id: string): Promise<SsoProviderRow | undefined> {
  const [row] = await db.select().from(ssoProviders).where(eq(ssoProviders.id, id)).limit(1);
  return row;
}

export async function listSsoProviders(db: Executor, twinId: string, page = 1, limit = 100) {
  const where = eq(ssoProviders.twinId, twinId);
  const rows = await db
    .select()
    .from(ssoProviders)
    .where(where)
    .orderBy(desc(ssoProviders.createdAt), desc(ssoProviders.id))
    .limit(limit)
    .offset((page - 1) * limit);
  const [{ total }] = await db.select({ total: sql<number>`count(*)::int` }).from(ssoProviders).where(where);
  return { rows, total };
}

export async function insertSsoProvider(db: Executor, values: typeof ssoProviders.$inferInsert): Promise<SsoProviderRow> {
  const [row] = await db.insert(ssoProviders).values(values).returning();
  return row;
}

export async function updateSsoProvider(db: Executor, twinId: string, id: string, values: Partial<typeof ssoProviders.$inferInsert>) {
  if (!setsSomething(values)) {
    const current = await findSsoProvider(db, id);
    return current?.twinId === twinId ? current : undefined;
  }
  const [row] = await db
    .update(ssoProviders)
    .set(values)
    .where(and(eq(ssoProviders.twinId, twinId), eq(ssoProviders.id, id)))
    .returning();
  return row;
}

export async function deleteSsoProviders(db: Executor, twinId: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await db
    .delete(ssoProviders)
    .where(and(eq(ssoProviders.twinId, twinId), inArray(ssoProviders.id, ids)))
    .returning({ id: ssoProviders.id });
  return rows.length;
}

export async function countSsoProviders(db: Executor, twinId: string): Promise<number> {
  const [row] = await db.select({ count: sql<number>`count(*)::int` }).from(ssoProviders).where(eq(ssoProviders.twinId, twinId));
  return row.count;
}
