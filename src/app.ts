// buildApp: cross-cutting plugins first, then one registration per route family. No listen() here:
// main.ts listens, tests use inject() or listen on port 0.
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import type { DatabaseHandle } from './platform/db/client.js';
import { registerAuthGuard } from './platform/http/auth-guard.js';
import { registerBodyGuard } from './platform/http/body-guard.js';
import { registerErrorHandler } from './platform/http/error-handler.js';
import { registerJsonParser } from './platform/http/json-parser.js';
import { registerOpenApi } from './platform/http/openapi.js';
import type { App } from './platform/http/schemas.js';
import { registerMetrics } from './platform/metrics/metrics.js';
import type { EventBus } from './platform/realtime/bus.js';
import type { Mailer } from './platform/mail/mailer.js';
import type { FileStorage } from './platform/storage/storage.js';
import type { SecretBox } from './platform/crypto/secrets.js';
import type { JobQueue } from './platform/jobs/queue.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { createAuthService } from './modules/auth/auth.service.js';
import { createSessionCache } from './modules/auth/session-cache.js';
import { createTokenSigner } from './modules/auth/tokens.js';
import { filesModule } from './modules/files/files.module.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { createProfileService } from './modules/users/profile.service.js';
import { userRoutes } from './modules/users/users.routes.js';

export const VERSION = '2.0.262';

export interface AppDeps {
  config: Config;
  database: DatabaseHandle;
  bus: EventBus;
  mailer: Mailer;
  storage: FileStorage;
  jobs: JobQueue;
  secrets: SecretBox;
  logger?: FastifyServerOptions['logger'];
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, database } = deps;
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    bodyLimit: config.bodyLimit,
    trustProxy: true,
    requestIdHeader: 'x-request-id',
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Cross-cutting: headers, CORS, errors, body guard, metrics, documentation.
  await app.register(helmet, { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'cross-origin' } });
  await app.register(cors, { origin: true, credentials: true, exposedHeaders: ['x-request-id'] });
  registerErrorHandler(app);
  registerJsonParser(app);
  registerBodyGuard(app);
  registerMetrics(app);
  await app.register(multipart, { limits: { fileSize: config.uploadLimit, files: 1, fields: 20, fieldSize: 16_384 } });
  await registerOpenApi(app, { version: VERSION, publicUrl: config.publicUrl });

  // Services.
  const profiles = createProfileService(database.db);
  const cache = await createSessionCache(deps.bus);
  app.addHook('onClose', () => cache.close());
  const auth = createAuthService({ db: database.db, tokens: createTokenSigner(config.jwtSecret), profiles, cache });
  registerAuthGuard(app, auth.verify);

  // Route families.
  healthRoutes(app, { version: VERSION, database, redis: () => deps.bus.kind === 'redis' });
  authRoutes(app, auth);
  userRoutes(app, profiles);
  await filesModule(app, deps);

  return app;
}
