// /api/user/setting: the signed-in person's preferences (contract additions), read and written field by field.
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import { settingsResult, settingsSchema } from './settings.schemas.js';
import type { SettingsService } from './settings.service.js';

export function settingsRoutes(app: App, settings: SettingsService): void {
  app.get(
    '/api/user/setting',
    {
      schema: { tags: ['user: settings'], summary: "The caller's preferences", response: { 200: settingsResult, ...failures(401) } },
    },
    async (request) => ({ success: true as const, data: await settings.read(actorOf(request)) }),
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
    async (request) => ({ success: true as const, data: await settings.update(actorOf(request), request.body) }),
  );
}
