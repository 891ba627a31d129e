// The Assistants family for the signed-in person: the pickable list (behaviour 1), read, create,
// update (assistant-update.ts) and delete (status becomes deleted).
import type { Database } from '../../platform/db/client.js';
import { isSuper, isVisitor, type Actor, type Caller } from '../../platform/http/actor.js';
import { BadRequestError } from '../../platform/http/errors.js';
import { findTwinById } from '../twins/twins.repo.js';
import { AccessContext, requireAccess } from '../access/access.js';
import { contentColumns, requestedTwin, requestedSharing } from './assistant-fields.js';
import { updateAssistantAs } from './assistant-update.js';
import { presentAssistant } from './assistants.presenter.js';
import { standardAssistant } from './resolver.js';
import { assistantTarget, insertAssistant, listPickableAssistants, updateAssistant } from './assistants.repo.js';
import type { AssistantCreateInput, AssistantScope, AssistantUpdateInput, AssistantWire } from './assistants.schemas.js';
import type { AssistantRow } from './assistants.tables.js';
import { pickContextForActor, STANDARD_ASSISTANT_KEY, type PickContext } from './scope.js';
import { decideSharing } from './sharing.js';

export function createAssistantService(db: Database) {
  /** canEdit of rows already known to be pickable, with one permission lookup per other twin. */
  async function presentPickable(actor: Actor, ctx: PickContext, rows: AssistantRow[]): Promise<AssistantWire[]> {
    const manages = new Map<string, boolean>();
    if (ctx.twinId) manages.set(ctx.twinId, ctx.managesCurrent);
    const access = new AccessContext(db, actor);
    const out: AssistantWire[] = [];
    for (const row of rows) {
      let canEdit: boolean;
      if (!row.userId && !row.twinId) canEdit = isSuper(actor) && !actor.launchScope;
      else if (row.userId === actor.userId || row.editableOthers) canEdit = true;
      else if (!row.twinId) canEdit = false;
      else {
        if (!manages.has(row.twinId)) manages.set(row.twinId, await access.check('assistants.edit', { twin: row.twinId }));
        canEdit = manages.get(row.twinId)!;
      }
      out.push(presentAssistant(row, { canEdit }));
    }
    return out;
  }

  return {
    /** A visitor's list is what its turn runs on: New Conversation, which it cannot edit. */
    async list(caller: Caller): Promise<AssistantWire[]> {
      if (isVisitor(caller)) return [presentAssistant(await standardAssistant(db), { canEdit: false })];
      const actor = caller;
      const ctx = await pickContextForActor(db, actor);
      return presentPickable(actor, ctx, await listPickableAssistants(db, ctx));
    },

    /** Favorites as records, keeping the caller's order, dropping those no longer pickable. */
    async pickableByIds(ctx: PickContext, ids: string[], actor?: Actor): Promise<AssistantWire[]> {
      const rows = await listPickableAssistants(db, ctx, ids);
      const byId = new Map(rows.map((row) => [row.id, row]));
      const ordered = ids.map((id) => byId.get(id)).filter((row): row is AssistantRow => Boolean(row));
      if (actor) return presentPickable(actor, ctx, ordered);
      // Without a request (profile refresh): owner, editable_others, or managing the current twin's assistants.
      const canEdit = (row: AssistantRow) =>
        row.userId === ctx.userId || (row.editableOthers && Boolean(row.userId || row.twinId)) || (row.twinId !== null && row.twinId === ctx.twinId && ctx.managesCurrent);
      return ordered.map((row) => presentAssistant(row, { canEdit: canEdit(row) }));
    },

    async get(actor: Actor, id: string): Promise<AssistantWire> {
      const target = await assistantTarget(db, actor, id);
      const access = await requireAccess(db, actor, 'assistant.read', target);
      return presentAssistant(target.assistant!, { canEdit: access.canEdit });
    },

    async create(actor: Actor, body: AssistantCreateInput): Promise<{ data: AssistantWire; scope: AssistantScope; sharingDropped: boolean }> {
      if (body.status === 'deleted') throw new BadRequestError('Invalid Properties', 'VALIDATION_FAILED', { field: 'body.status' });
      const named = requestedTwin(body);
      const targetId = named === undefined ? actor.twinId : named;
      let managesTarget = false;
      let hasAccount = false;
      if (targetId) {
        const twin = await findTwinById(db, targetId);
        managesTarget = await requireAccess(db, actor, 'assistant.place', { twin });
        hasAccount = Boolean(twin!.accountId);
      }
      const outcome = decideSharing({
        previous: { twinShared: false, accountShared: false, adminOnly: false },
        requested: requestedSharing(body),
        target: { twinId: targetId, hasAccount },
        moving: false,
        callerManagesTarget: managesTarget,
        callerIsOwner: true,
        system: false,
      });
      const row = await insertAssistant(db, {
        ...contentColumns(body),
        name: body.name,
        ...outcome.flags,
        userId: actor.userId,
        twinId: targetId,
      });
      return { data: presentAssistant(row, { canEdit: true }), scope: outcome.scope, sharingDropped: outcome.sharingDropped };
    },

    update: (actor: Actor, id: string, body: AssistantUpdateInput) => updateAssistantAs(db, actor, id, body),

    async remove(actor: Actor, id: string): Promise<void> {
      const target = await assistantTarget(db, actor, id);
      await requireAccess(db, actor, 'assistant.delete', { ...target, standard: target.assistant?.systemKey === STANDARD_ASSISTANT_KEY });
      await updateAssistant(db, id, { status: 'deleted' });
    },
  };
}

export type AssistantService = ReturnType<typeof createAssistantService>;
