// The admin assistants family: assistants across the twins where the caller holds assistants.list
// (super admins: every assistant, system and personal included), edit with the update route's rules
// (deleted ones included, so they can be restored), and bulk delete scoped by assistants.delete.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { ForbiddenError } from '../../platform/http/errors.js';
import { inTwins, requireSomeTwin, twinsWhere } from '../institutions/admin-twins.js';
import { loadAssistantFor } from './assistant-access.js';
import { updateAssistantAs } from './assistant-update.js';
import { presentAssistant } from './assistants.presenter.js';
import { listAssistantsForAdmin, markAssistantsDeleted } from './assistants.repo.js';
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
      const twins = await twinsWhere(db, actor, 'assistants.list');
      if (twins !== 'all' && twins.length === 0) throw new ForbiddenError('Not authorized', 'FORBIDDEN');
      const editable = await twinsWhere(db, actor, 'assistants.edit');
      const { rows, total } = await listAssistantsForAdmin(db, {
        institutionIds: twins,
        status: query.status,
        institutionId: query.institution,
        search: query.search,
        page: query.page,
        limit: query.limit,
      });
      const data = rows.map((row) => presentAssistant(row, { canEdit: inTwins(editable, row.institutionId) }));
      return { data, page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string): Promise<AssistantWire> {
      const access = await loadAssistantFor(db, actor, id, { includeDeleted: true });
      return presentAssistant(access.row, { canEdit: access.canEdit });
    },

    update: (actor: Actor, id: string, body: AssistantUpdateInput) => updateAssistantAs(db, actor, id, body, { includeDeleted: true }),

    async bulkDelete(actor: Actor, ids: string[]): Promise<number> {
      const twins = await twinsWhere(db, actor, 'assistants.delete');
      requireSomeTwin(twins);
      return markAssistantsDeleted(db, ids, twins);
    },
  };
}

export type AdminAssistantService = ReturnType<typeof createAdminAssistantService>;
