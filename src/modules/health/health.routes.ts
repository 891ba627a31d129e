// /api/test: health and diagnostics. 503 with status "degraded" when the database does not answer, and
// "starting" while the process starts (answered before the app exists: platform/http/starting.ts).
import { z } from 'zod';
import type { App } from '../../platform/http/schemas.js';

const healthSchema = z.object({
  success: z.boolean(),
  status: z.enum(['ok', 'degraded', 'starting']).describe('ok; degraded (503) when the database does not answer; starting (503, Retry-After: 1) while the process starts, when every other route answers 503 STARTING too'),
  version: z.string(),
  database: z.enum(['pglite', 'postgres']),
  redis: z.boolean(),
});

export interface HealthDeps {
  version: string;
  database: { kind: 'pglite' | 'postgres'; ping(): Promise<boolean> };
  redis: () => boolean;
}

export function healthRoutes(app: App, deps: HealthDeps): void {
  app.get(
    '/api/test',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['health'],
        summary: 'Health and diagnostics',
        security: [],
        response: { 200: healthSchema, 503: healthSchema },
      },
    },
    async (_request, reply) => {
      const up = await deps.database.ping();
      const body = {
        success: up,
        status: up ? ('ok' as const) : ('degraded' as const),
        version: deps.version,
        database: deps.database.kind,
        redis: deps.redis(),
      };
      return reply.status(up ? 200 : 503).send(body);
    },
  );
}
