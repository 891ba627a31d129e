// /api/user/setting: the signed-in person's preferences (contract additions), read and written field by field.
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import { actorOf } from '../../platform/http/auth-guard.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { failures, objectId, type App } from '../../platform/http/schemas.js';
import { findUserById, updateUser, type NewUser } from '../users/users.repo.js';
import type { UserRow } from '../users/users.tables.js';

const settingsSchema = z.object({
  dark_mode: z.boolean(),
  pin_ui: z.boolean(),
  use_location: z.boolean(),
  browser_voice: z.string().max(200),
  rt_voice: z.string().max(200),
  remember_history_count: z.number().int().min(0).max(100),
  userMemoryEnabled: z.boolean().describe('behaviour 7: off = no personal memory saved or used'),
  voiceAssistantId: objectId.nullable().describe('the assistant chosen for voice in the current twin; cleared on switching twins'),
});
type Settings = z.infer<typeof settingsSchema>;
const settingsResult = z.object({ success: z.literal(true), data: settingsSchema });

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

export function settingsRoutes(app: App, db: Database): void {
  const load = async (userId: string) => {
    const user = await findUserById(db, userId);
    if (!user) throw new NotFoundError('User not found');
    return user;
  };

  app.get(
    '/api/user/setting',
    {
      schema: { tags: ['user: settings'], summary: "The caller's preferences", response: { 200: settingsResult, ...failures(401) } },
    },
    async (request) => ({ success: true as const, data: present(await load(actorOf(request).userId)) }),
  );

  app.put(
    '/api/user/setting',
    {
      schema: {
        tags: ['user: settings'],
        summary: "Change the caller's preferences",
        description: 'Any of the fields; the others stay. Unknown keys are dropped. Answers every preference as saved.',
        body: settingsSchema.partial(),
        response: { 200: settingsResult, ...failures(400, 401) },
      },
    },
    async (request) => {
      const { userId } = actorOf(request);
      const values = toColumns(request.body);
      const user = Object.keys(values).length > 0 ? await updateUser(db, userId, values) : await load(userId);
      return { success: true as const, data: present(user ?? (await load(userId))) };
    },
  );
}
