// A person's preferences: read and written field by field on their own account row.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { findUserById, updateUser, type NewUser } from '../users/users.repo.js';
import type { UserRow } from '../users/users.tables.js';
import type { Settings } from './settings.schemas.js';

function present(user: UserRow): Settings {
  return {
    dark_mode: user.darkMode,
    pin_ui: user.pinUi,
    use_location: user.useLocation,
    browser_voice: user.browserVoice,
    rt_voice: user.rtVoice,
    remember_history_count: user.rememberHistoryCount,
    userMemoryEnabled: user.userMemoryEnabled,
    voiceAssistantId: user.voiceAssistantId,
  };
}

function toColumns(input: Partial<Settings>): Partial<NewUser> {
  const map: Record<keyof Settings, keyof NewUser> = {
    dark_mode: 'darkMode',
    pin_ui: 'pinUi',
    use_location: 'useLocation',
    browser_voice: 'browserVoice',
    rt_voice: 'rtVoice',
    remember_history_count: 'rememberHistoryCount',
    userMemoryEnabled: 'userMemoryEnabled',
    voiceAssistantId: 'voiceAssistantId',
  };
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (value !== undefined) values[map[key as keyof Settings]] = value;
  return values as Partial<NewUser>;
}

export function createSettingsService(db: Database) {
  const load = async (userId: string) => {
    const user = await findUserById(db, userId);
    if (!user) throw new NotFoundError('User not found');
    return user;
  };
  return {
    /** The caller's own preferences (a person may only read their own). */
    async read(actor: Actor): Promise<Settings> {
      return present(await load(actor.userId));
    },
    /** Changes the given preferences of the caller; an empty change answers them as they are. */
    async update(actor: Actor, input: Partial<Settings>): Promise<Settings> {
      const values = toColumns(input);
      const user = Object.keys(values).length > 0 ? await updateUser(db, actor.userId, values) : await load(actor.userId);
      return present(user ?? (await load(actor.userId)));
    },
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
