// Maps the wire fields of a create or update body to columns. The sharing flags, the twin and the
// owner are decided by the services, never copied from the body.
import type { AssistantCreateInput, AssistantUpdateInput } from './assistants.schemas.js';
import type { NewAssistant } from './assistants.tables.js';

export function contentColumns(body: AssistantUpdateInput | AssistantCreateInput): Partial<NewAssistant> {
  const columns: Partial<NewAssistant> = {
    name: body.name,
    description: body.description,
    instructions: body.instructions,
    status: body.status,
    argument1: body.argument_1,
    argument2: body.argument_2,
    argument3: body.argument_3,
    argument4: body.argument_4,
    argument5: body.argument_5,
    pictureUrl: body.picture_url,
    editableOthers: body.editable_others,
    ragEnabled: body.ragEnabled,
    bypassSystemContext: body.bypassSystemContext,
    rememberHistory: body.remember_history,
    conversationModel: body.conversationModel,
    stsConversationModel: body.stsConversationModel,
    assistantToolMode: body.assistantToolMode,
    tools: body.tools,
    delegates: body.delegates,
    stsReasoningEffort: body.stsReasoningEffort,
  };
  return Object.fromEntries(Object.entries(columns).filter(([, value]) => value !== undefined)) as Partial<NewAssistant>;
}

/** The twin named by a body: undefined when not given, null for '' (personal). */
export function requestedTwin(body: { institution?: string }): string | null | undefined {
  if (body.institution === undefined) return undefined;
  return body.institution === '' ? null : body.institution;
}

export function requestedSharing(body: AssistantUpdateInput) {
  return { twinShared: body.institution_shared, accountShared: body.account_shared, adminOnly: body.admin_only };
}
