// Custom AI models: administrators holding models.edit manage their twins' models; deployment-wide
// models (no twin) are read by any such administrator and written by super admins only. People see the
// active models of their current twin and the deployment-wide ones. A baseUrl is checked by the outbound
// guard when saved (and every turn's request to it again); a move to another origin drops the stored key.
import type { Database } from '../../platform/db/client.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Actor } from '../../platform/http/actor.js';
import { ConflictError, NotFoundError } from '../../platform/http/errors.js';
import { refuseUnlessAllowed, type OutboundPolicy } from '../../platform/net/outbound-guard.js';
import { secretAfterMove, type SecretChange } from '../../platform/net/secret-after-move.js';
import { findTwinById } from '../twins/twins.repo.js';
import { requireAccess } from '../access/access.js';
import { presentAdminCustomModel, presentCustomModel } from './custom-models.presenter.js';
import {
  deleteCustomModels,
  findCustomModelById,
  insertCustomModel,
  listAvailableModels,
  listCustomModelsForAdmin,
  updateCustomModel,
} from './custom-models.repo.js';
import type { AdminCustomModelWire, AdminModelsQuery, CustomModelCreateInput, CustomModelUpdateInput, CustomModelWire } from './custom-models.schemas.js';
import type { CustomModelRow, NewCustomModel } from './custom-models.tables.js';

export const MODEL_NOT_FOUND = 'AI model not found';

export function createCustomModelService(db: Database, secrets: Pick<SecretBox, 'encrypt'>, policy: OutboundPolicy) {
  function columns(body: CustomModelUpdateInput, stored?: CustomModelRow): Partial<NewCustomModel> {
    const values: Partial<NewCustomModel> = {
      name: body.name,
      model: body.model,
      description: body.description,
      provider: body.provider,
      status: body.status,
      maxTokens: body.maxTokens,
      contextWindow: body.contextWindow,
      baseUrl: body.baseUrl,
      minReasoningEffort: body.minReasoningEffort,
      inputPricePer1k: body.inputPricePer1k,
      outputPricePer1k: body.outputPricePer1k,
    };
    // An empty or missing key keeps the stored one; clearApiKey removes it; so does a move to another origin.
    const given: SecretChange = body.apiKey ? { set: body.apiKey } : body.clearApiKey ? 'remove' : 'keep';
    const change = stored ? secretAfterMove(stored.baseUrl, body.baseUrl, given) : given;
    if (change === 'remove') values.apiKeySealed = null;
    else if (change !== 'keep') values.apiKeySealed = secrets.encrypt(change.set);
    return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<NewCustomModel>;
  }

  /** '' is the deployment's own endpoint (trusted); any other baseUrl must pass the outbound guard. */
  async function guard(baseUrl: string | undefined): Promise<void> {
    if (baseUrl) await refuseUnlessAllowed(policy, baseUrl);
  }

  async function save<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('A model with this name already exists', 'MODEL_NAME_TAKEN');
      throw error;
    }
  }

  /** The model as an admin may reach it: 404 outside their twins; writes of deployment-wide ones need a super admin. */
  async function reach(actor: Actor, id: string, intent: 'read' | 'write'): Promise<CustomModelRow> {
    const row = await findCustomModelById(db, id);
    await requireAccess(db, actor, intent === 'read' ? 'model.read' : 'model.write', { model: row });
    return row!;
  }

  return {
    async available(actor: Actor): Promise<CustomModelWire[]> {
      return (await listAvailableModels(db, actor.twinId)).map(presentCustomModel);
    },

    async list(actor: Actor, query: AdminModelsQuery) {
      const twins = await requireAccess(db, actor, 'twins.managed', { permission: 'models.edit' });
      const { rows, total } = await listCustomModelsForAdmin(db, { twins, twinId: query.institution, search: query.search, page: query.page, limit: query.limit });
      return { data: rows.map(presentAdminCustomModel), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string): Promise<AdminCustomModelWire> {
      return presentAdminCustomModel(await reach(actor, id, 'read'));
    },

    async create(actor: Actor, body: CustomModelCreateInput): Promise<AdminCustomModelWire> {
      const twinId = body.institution === undefined ? actor.twinId : body.institution;
      await requireAccess(db, actor, 'model.create', { twinId });
      if (twinId !== null) {
        if (!(await findTwinById(db, twinId))) throw new NotFoundError('Institution not found', 'INSTITUTION_NOT_FOUND');
      }
      await guard(body.baseUrl);
      const row = await save(() => insertCustomModel(db, { ...columns(body), name: body.name, model: body.model, twinId }));
      return presentAdminCustomModel(row);
    },

    async update(actor: Actor, id: string, body: CustomModelUpdateInput): Promise<AdminCustomModelWire> {
      const stored = await reach(actor, id, 'write');
      await guard(body.baseUrl);
      const row = await save(() => updateCustomModel(db, id, columns(body, stored)));
      return presentAdminCustomModel(row!);
    },

    async remove(actor: Actor, id: string): Promise<void> {
      await reach(actor, id, 'write');
      await deleteCustomModels(db, [id], 'all');
    },

    async bulkDelete(actor: Actor, ids: string[]): Promise<number> {
      const twins = await requireAccess(db, actor, 'twins.managed', { permission: 'models.edit' });
      return deleteCustomModels(db, ids, twins);
    },
  };
}

export type CustomModelService = ReturnType<typeof createCustomModelService>;
