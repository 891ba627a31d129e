// Shapes an assistant field by field, with the spec's wire names. Instructions are shown only to
// people who may edit the assistant: for everyone else they are the assistant's working detail.
import type { AssistantWire } from './assistants.schemas.js';
import type { AssistantRow } from './assistants.tables.js';
import { STANDARD_ASSISTANT_KEY } from './scope.js';
import { scopeOf } from './sharing.js';

export function presentAssistant(row: AssistantRow, viewer: { canEdit: boolean }): AssistantWire {
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    instructions: viewer.canEdit ? row.instructions : '',
    status: row.status,
    argument_1: row.argument1,
    argument_2: row.argument2,
    argument_3: row.argument3,
    argument_4: row.argument4,
    argument_5: row.argument5,
    picture_url: row.pictureUrl,
    admin_only: row.adminOnly,
    editable_others: row.editableOthers,
    institution_shared: row.twinShared,
    account_shared: row.accountShared,
    ragEnabled: row.ragEnabled,
    bypassSystemContext: row.bypassSystemContext,
    remember_history: row.rememberHistory,
    user: row.userId,
    institution: row.twinId,
    conversationModel: row.conversationModel,
    stsConversationModel: row.stsConversationModel,
    assistantToolMode: row.assistantToolMode,
    tools: row.tools,
    delegates: row.delegates,
    stsReasoningEffort: row.stsReasoningEffort,
    created: row.createdAt.toISOString(),
    liked_count: row.likedCount,
    scope: scopeOf({ ...row, system: !row.userId && !row.twinId }),
    standard: row.systemKey === STANDARD_ASSISTANT_KEY,
    canEdit: viewer.canEdit,
  };
}
