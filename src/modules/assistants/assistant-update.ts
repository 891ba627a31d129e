// PUT /api/user/assistant/{id} (and the admin edit): who may edit, which twin the assistant ends in,
// and the sharing decided on that twin (sharing.ts). Checks run in this order: visible (404), may edit
// (403), may move / change status or editable_others (403), target twin (404, then 403 when assistant
// creation is off there), then the update in one statement.
import type { Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { findTwinById } from '../twins/twins.repo.js';
import { requireAccess } from '../access/access.js';
import { contentColumns, requestedTwin, requestedSharing } from './assistant-fields.js';
import { assistantTarget, updateAssistant } from './assistants.repo.js';
import type { AssistantScope, AssistantUpdateInput } from './assistants.schemas.js';
import { STANDARD_ASSISTANT_KEY } from './scope.js';
import { decideSharing } from './sharing.js';

export const ASSISTANT_UPDATED = 'Assistant updated successfully';

export interface UpdateOutcome {
  success: true;
  message: string;
  scope: AssistantScope;
  sharingDropped: boolean;
}

export async function updateAssistantAs(
  db: Executor,
  actor: Actor,
  id: string,
  body: AssistantUpdateInput,
  options: { includeDeleted?: boolean } = {},
): Promise<UpdateOutcome> {
  const found = await assistantTarget(db, actor, id, options);
  const before = found.assistant;
  const named = requestedTwin(body);
  const targetId = named === undefined ? before?.twinId ?? null : named;
  const moving = targetId !== (before?.twinId ?? null);
  const statusChange = body.status !== undefined && body.status !== before?.status;
  const change = {
    moving,
    status: statusChange,
    editableOthers: body.editable_others !== undefined && body.editable_others !== before?.editableOthers,
    standard: before?.systemKey === STANDARD_ASSISTANT_KEY,
  };
  const access = await requireAccess(db, actor, 'assistant.edit', { ...found, change });
  const row = before!;

  const target = targetId ? await findTwinById(db, targetId) : undefined;
  let managesTarget = access.manages;
  if (moving && targetId) {
    managesTarget = await requireAccess(db, actor, 'assistant.place', { twin: target });
  }

  const outcome = decideSharing({
    previous: { twinShared: row.twinShared, accountShared: row.accountShared, adminOnly: row.adminOnly },
    requested: requestedSharing(body),
    target: { twinId: targetId, hasAccount: Boolean(target?.accountId) },
    moving,
    callerManagesTarget: managesTarget,
    callerIsOwner: access.owner,
    system: access.system,
  });
  await updateAssistant(db, id, { ...contentColumns(body), ...outcome.flags, twinId: targetId });
  return { success: true, message: ASSISTANT_UPDATED, scope: outcome.scope, sharingDropped: outcome.sharingDropped };
}
