// Behaviour 1 in one place: which assistants a person may pick in their current twin. The same SQL
// condition drives the Assistants list, the conversation resolver and populated favorites.
//
// Pickable, for a caller in current twin T (on account A):
// - status active; an unpublished assistant only for its owner; deleted never;
// - system assistants (no owner, no twin);
// - the caller's personal assistants (owner = caller, no twin);
// - T's assistants the caller owns, and T's institution_shared ones; admin_only ones only for people
//   who manage T's assistants (its administrators and holders of assistants.edit);
// - account_shared (and institution_shared) assistants of another live twin on account A, unless admin_only;
// - never an id listed in T's assistantsDisabled (except the standard assistant, the fallback of all).
import { and, eq, isNull, ne, notInArray, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { findTwinById, findMembership } from '../twins/twins.repo.js';
import { twins } from '../twins/twins.tables.js';
import { permissionsFor } from '../../platform/http/permissions.js';
import type { UserRow } from '../users/users.tables.js';
import { assistants } from './assistants.tables.js';

export const STANDARD_ASSISTANT_KEY = 'new-conversation';
export const STANDARD_ASSISTANT_NAME = 'New Conversation';

export interface PickContext {
  userId: string;
  twinId: string | null;
  accountId: string | null;
  /** The caller manages the current twin's assistants (admin, super, or assistants.edit). */
  managesCurrent: boolean;
  disabledIds: string[];
}

export async function pickContextForActor(db: Executor, actor: Actor): Promise<PickContext> {
  const twin = actor.twinId ? await findTwinById(db, actor.twinId) : undefined;
  return {
    userId: actor.userId,
    twinId: twin?.id ?? null,
    accountId: twin?.accountId ?? null,
    managesCurrent: Boolean(twin) && actor.permissions.includes('assistants.edit'),
    disabledIds: twin?.assistantsDisabled ?? [],
  };
}

/** The same context for a person outside a request (favorites on profile refresh). */
export async function pickContextForUser(db: Executor, user: UserRow): Promise<PickContext> {
  const twin = user.currentTwinId ? await findTwinById(db, user.currentTwinId) : undefined;
  const membership = twin ? await findMembership(db, user.id, twin.id) : undefined;
  const permissions = twin ? permissionsFor(user.accountType, membership?.role, membership?.permissions ?? []) : [];
  return {
    userId: user.id,
    twinId: twin?.id ?? null,
    accountId: twin?.accountId ?? null,
    managesCurrent: permissions.includes('assistants.edit'),
    disabledIds: twin?.assistantsDisabled ?? [],
  };
}

export function pickableWhere(ctx: PickContext): SQL {
  const own = eq(assistants.userId, ctx.userId);
  // Status 'deleted' (never pickable) also covers rows deleted with their owner's data (deleted_at).
  const status = or(eq(assistants.status, 'active'), and(eq(assistants.status, 'unpublished'), own))!;
  const places: SQL[] = [
    and(isNull(assistants.userId), isNull(assistants.twinId))!,
    and(own, isNull(assistants.twinId))!,
  ];
  if (ctx.twinId) {
    const sharedHere = ctx.managesCurrent
      ? eq(assistants.twinShared, true)
      : and(eq(assistants.twinShared, true), eq(assistants.adminOnly, false))!;
    places.push(and(eq(assistants.twinId, ctx.twinId), or(own, sharedHere))!);
    if (ctx.accountId) {
      places.push(
        and(
          ne(assistants.twinId, ctx.twinId),
          eq(assistants.accountShared, true),
          eq(assistants.twinShared, true),
          eq(assistants.adminOnly, false),
          sql`${assistants.twinId} in (select ${twins.id} from ${twins} where ${twins.accountId} = ${ctx.accountId} and ${twins.deletedAt} is null)`,
        )!,
      );
    }
  }
  const condition = and(status, or(...places))!;
  if (ctx.disabledIds.length === 0) return condition;
  return and(
    condition,
    or(notInArray(assistants.id, ctx.disabledIds), eq(assistants.systemKey, STANDARD_ASSISTANT_KEY)),
  )!;
}
