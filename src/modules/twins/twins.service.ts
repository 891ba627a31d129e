// Twin administration: create (super), list and read (twins where the caller holds institutions.list),
// edit settings and branding (institutions.edit; behaviour 6), bulk status and soft delete (behaviour 13).
// Also the rule every feature applies: an inactive twin cannot be used.
import type { Database } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { checkAccess, requireAccess } from '../access/access.js';
import {
  accountExists,
  findTwinById,
  insertTwin,
  listTwins,
  setTwinStatus,
  softDeleteTwins,
  updateTwin,
  type NewTwin,
} from './twins.repo.js';
import { presentAdminTwin } from './twins.presenter.js';
import type { EditTwinInput } from './twins.schemas.js';
import type { TwinRow } from './twins.tables.js';

export const INSTITUTION_NOT_FOUND = 'Institution not found';

/** 403 INSTITUTION_INACTIVE: conversations, switching and joining refuse an inactive twin. */
export class TwinInactiveError extends ForbiddenError {
  constructor(twinId: string) {
    super('This Digital Twin is inactive', 'INSTITUTION_INACTIVE', { institutionId: twinId });
  }
}

export function assertTwinUsable(row: Pick<TwinRow, 'id' | 'status'>): void {
  if (row.status !== 'active') throw new TwinInactiveError(row.id);
}

const WIRE_TO_COLUMN = {
  picture_bg: 'pictureBg',
  picture_animated: 'pictureAnimated',
  picture_dark_bg: 'pictureDarkBg',
  voice_agent_id: 'voiceAgentId',
  // The contract's name; the column keeps the one it was created with.
  liveTranscriptEnabled: 'embedTranscriptEnabled',
} as const;
const SUPER_ONLY_FIELDS = new Set(['accountId']);

/** Column values from the wire body; behaviour 6 applied against the twin's current state. */
function toColumns(input: EditTwinInput, current: Pick<TwinRow, 'longTermMemoryEnabled'> | null): Partial<NewTwin> {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    values[WIRE_TO_COLUMN[key as keyof typeof WIRE_TO_COLUMN] ?? key] = value;
  }
  // Behaviour 6: enabling long-term memory also turns admins-only off and makes it the default mode.
  if (input.longTermMemoryEnabled === true && !current?.longTermMemoryEnabled) {
    values.memoryAdminsOnly = false;
    values.defaultMemoryMode = 'long_term';
  }
  return values as Partial<NewTwin>;
}

export function createTwinsService(db: Database) {
  /** A twin joins only an account that exists (null leaves its account). */
  async function checkAccount(input: EditTwinInput): Promise<void> {
    if (input.accountId && !(await accountExists(db, input.accountId))) throw new NotFoundError('Account not found', 'ACCOUNT_NOT_FOUND');
  }

  /** The twin when the caller holds `permission` there; 404 otherwise (never leaks another twin). */
  async function load(actor: Actor, id: string, permission: 'institutions.list' | 'institutions.edit'): Promise<TwinRow> {
    const row = await findTwinById(db, id);
    await requireAccess(db, actor, permission === 'institutions.list' ? 'twin.read' : 'twin.edit', { twin: row });
    return row!;
  }

  return {
    async create(actor: Actor, input: EditTwinInput & { name: string }) {
      await requireAccess(db, actor, 'twin.create', {});
      await checkAccount(input);
      const row = await insertTwin(db, { ...toColumns(input, null), name: input.name });
      return presentAdminTwin(row);
    },

    async list(actor: Actor, query: { page: number; limit: number; search?: string; status?: 'active' | 'inactive' }) {
      const scope = await requireAccess(db, actor, 'twins.managed', { permission: 'institutions.list', ifNone: 'empty', withDeleted: true });
      const { rows, total } = await listTwins(
        db,
        { scope, search: query.search, status: query.status },
        { offset: (query.page - 1) * query.limit, limit: query.limit },
      );
      return { success: true as const, data: rows.map(presentAdminTwin), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string) {
      return presentAdminTwin(await load(actor, id, 'institutions.list'));
    },

    async edit(actor: Actor, id: string, input: EditTwinInput) {
      const current = await load(actor, id, 'institutions.edit');
      const ignoredFields: string[] = [];
      const applied: EditTwinInput = { ...input };
      if (!isSuper(actor)) {
        for (const key of Object.keys(input)) {
          if (SUPER_ONLY_FIELDS.has(key)) {
            delete applied[key as keyof EditTwinInput];
            ignoredFields.push(key);
          }
        }
      }
      await checkAccount(applied);
      const values = toColumns(applied, current);
      const row = Object.keys(values).length > 0 ? await updateTwin(db, id, values) : current;
      return { data: presentAdminTwin(row ?? current), ignoredFields };
    },

    async remove(actor: Actor, id: string): Promise<void> {
      await load(actor, id, 'institutions.list');
      await requireAccess(db, actor, 'twin.delete', {});
      await softDeleteTwins(db, [id]);
    },

    /** Behaviour 13: twins outside the caller's reach are left alone; deleting is for super admins. */
    async bulk(actor: Actor, action: 'activate' | 'deactivate' | 'delete', ids: string[]): Promise<number> {
      const scope = await requireAccess(db, actor, 'twins.managed', { permission: 'institutions.edit', withDeleted: true });
      const unique = [...new Set(ids)];
      if (action === 'delete') return (await checkAccess(db, actor, 'twin.delete', {})) ? (await softDeleteTwins(db, unique)).length : 0;
      const actionable = scope === 'all' ? unique : unique.filter((id) => scope.includes(id));
      return (await setTwinStatus(db, actionable, action === 'activate' ? 'active' : 'inactive')).length;
    },
  };
}

export type TwinsService = ReturnType<typeof createTwinsService>;
