// The admin assistants family: assistants across the twins where the caller holds assistants.list
// (super admins: every assistant, system and personal included), edit with the update route's rules
// (deleted ones included, so they can be restored), and bulk delete scoped by assistants.delete.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { inScope, requireAccess } from '../access/access.js';
import { updateAssistantAs } from './assistant-update.js';
import { presentAssistant } from './assistants.presenter.js';
import { assistantTarget, listAssistantsForAdmin, markAssistantsDeleted } from './assistants.repo.js';
import type { AssistantUpdateInput, AssistantWire } from './assistants.schemas.js';
import type { AssistantStatus } from './assistants.tables.js';

export interface AdminAssistantsQuery {
  page: number;
  limit: number;
  search?: string;
  status?: AssistantStatus;
  institution?: string;
}

export function createAdminAssistantService(db: Database) {
  return {
    async list(actor: Actor, query: AdminAssistantsQuery) {
      const twins = await requireAccess(db, actor, 'twins.managed', { permission: 'assistants.list' });
      const editable = await requireAccess(db, actor, 'twins.managed', { permission: 'assistants.edit', ifNone: 'empty' });
      const { rows, total } = await listAssistantsForAdmin(db, {
        twinIds: twins,
        status: query.status,
        twinId: query.institution,
        search: query.search,
        page: query.page,
        limit: query.limit,
      });
      const data = rows.map((row) => presentAssistant(row, { canEdit: inScope(editable, row.twinId) }));
      return { data, page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string): Promise<AssistantWire> {
      const target = await assistantTarget(db, actor, id, { includeDeleted: true });
      const access = await requireAccess(db, actor, 'assistant.read', target);
      return presentAssistant(target.assistant!, { canEdit: access.canEdit });
    },

    update: (actor: Actor, id: string, body: AssistantUpdateInput) => updateAssistantAs(db, actor, id, body, { includeDeleted: true }),

    async bulkDelete(actor: Actor, ids: string[]): Promise<number> {
      const twins = await requireAccess(db, actor, 'twins.managed', { permission: 'assistants.delete' });
      return markAssistantsDeleted(db, ids, twins);
    },
  };
}

export type AdminAssistantService = ReturnType<typeof createAdminAssistantService>;
