// buildApp: cross-cutting plugins first, then one registration per route family. No listen() here:
// main.ts listens, tests use inject() or listen on port 0.
import Fastify, { type FastifyServerOptions } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { validatorCompiler } from './platform/http/validator.js';
import { registerAuthGuard } from './platform/http/auth-guard.js';
import { registerBodyGuard } from './platform/http/body-guard.js';
import { coalesceServerWrites } from './platform/http/coalesced-writes.js';
import { openChangeFeed, type ChangeFeed } from './platform/db/change-feed.js';
import { registerChangeFence } from './platform/http/change-fence.js';
import { registerResponseHeaders } from './platform/http/security-headers.js';
import { OneLineRequestLog } from './platform/http/request-log.js';
import { requestLoggerFactory } from './platform/http/request-logger.js';
import { withLogRedaction } from './platform/http/log-redaction.js';
import { isWebClientBuilt, registerWebClient, WEB_DIST_DIR } from './platform/http/web-client.js';
import { registerErrorHandler, sendFrameworkError } from './platform/http/error-handler.js';
import { registerJsonParser } from './platform/http/json-parser.js';
import { registerOpenApi } from './platform/http/openapi.js';
import type { App } from './platform/http/schemas.js';
import { registerMetrics } from './platform/metrics/metrics.js';
import { createPersonTabs } from './platform/realtime/person-tabs.js';
import type { Platform } from './platform/platform.js';
import { defineJobs } from './jobs.js';
import { identityRoutes } from './identity.js';
import { launchScopeCheck, mustChangePasswordCheck } from './modules/auth/launch-scope.js';
import type { AuthLimits } from './modules/auth/throttle.js';
import { createAuthService } from './modules/auth/auth.service.js';
import { createSessionCache } from './modules/auth/session-cache.js';
import { createTokenSigner } from './modules/auth/tokens.js';
import { registerAccounts } from './modules/accounts/accounts.module.js';
import { registerAssistants } from './modules/assistants/assistants.module.js';
import { registerCharts } from './modules/charts/charts.module.js';
import { createApprovalGate } from './modules/approvals/approval-gate.js';
import { registerApprovals } from './modules/approvals/approvals.module.js';
import { registerCustomModels } from './modules/custom-models/custom-models.module.js';
import { registerConnectors } from './modules/connectors/connectors.module.js';
import { attachStreamSockets, type StreamRouter } from './modules/conversations/socket-events.js';
import { registerFiles } from './modules/files/files.module.js';
import { createBuiltinToolRunners, createContextProviders } from './modules/conversations/context-providers.js';
import { registerConversations } from './modules/conversations/conversations.module.js';
import { createTurnHandoff } from './modules/conversations/turn-handoff.js';
import { registerHealth } from './modules/health/health.module.js';
import { hasIdentityProvider } from './modules/oauth/oauth.service.js';
import { registerHistory } from './modules/history/history.module.js';
import { registerAdminUsers } from './modules/admin-users/admin-users.module.js';
import { registerBranding } from './modules/branding/branding.module.js';
import { registerCredits } from './modules/credits/credits.module.js';
import { registerEmbed } from './modules/embed/embed.module.js';
import { registerEntitlements } from './modules/entitlements/entitlements.module.js';
import { registerTwins } from './modules/twins/twins.module.js';
import { registerMemberships } from './modules/memberships/memberships.module.js';
import { registerMemory } from './modules/memory/memory.module.js';
import { registerQuestions } from './modules/questions/questions.module.js';
import { registerLti } from './modules/lti/lti.module.js';
import { registerPersonalData } from './modules/personal-data/personal-data.module.js';
import { registerSettings } from './modules/settings/settings.module.js';
import { registerSubscription } from './modules/subscription/subscription.module.js';
import { registerTranscription } from './modules/transcription/transcription.module.js';
import { registerVoiceAgent } from './modules/voice-agent/voice-agent.module.js';
import { registerRealtimeVoice } from './modules/realtime-voice/rt.module.js';
import { createProfileService } from './modules/users/profile.service.js';
import { registerUsers } from './modules/users/users.module.js';
import { VERSION } from './version.js';

export { VERSION };

/** The platform of the process (platform.ts) and what the app adds on top. */
export interface AppDeps extends Platform {
  logger?: FastifyServerOptions['logger'];
  /** Sign-in throttling; defaults in modules/auth/throttle.ts (tests set small numbers). */
  authLimits?: Partial<AuthLimits>;
  /** How long a socket may take to REGISTER (REGISTER_TIMEOUT_MS unless set: tests set small numbers). */
  socketRegisterTimeoutMs?: number;
  /** The clock of time-bound rules (an export's link expiry, the personal-data purge); tests move it. */
  now?: () => Date;
  /** The length of a voice session's minute, in ms (60 s unless set: tests set it small); see realtime-voice/rt.module.ts. */
  voiceMinuteMs?: number;
  /** Where the built web client is (web/dist unless set); without one the service answers the API only. */
  webClientDir?: string;
  /** A server already listening (platform/http/starting.ts), instead of one Fastify makes. */
  serverFactory?: FastifyServerOptions['serverFactory'];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Socket.IO streaming of answers (RECEIVE_STREAM) and cancels, across processes. */
    streams: StreamRouter;
    /** Row change notices for this process's caches (platform/db/change-feed.ts). */
    changes: ChangeFeed;
  }
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, database } = deps;
  const requestLog = new OneLineRequestLog();
  const logger = withLogRedaction(deps.logger ?? { level: config.logLevel });
  const app = Fastify({
    logger,
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    requestIdHeader: 'x-request-id',
    logController: requestLog,
    childLoggerFactory: requestLoggerFactory,
    frameworkErrors: sendFrameworkError,
    routerOptions: { ignoreTrailingSlash: true },
    ...(deps.serverFactory ? { serverFactory: deps.serverFactory } : {}),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Every connection's writes leave together once a loop turn (a listening server, or one handed connections).
  coalesceServerWrites(app.server);

  // Cross-cutting: headers, CORS, errors, body guard, metrics, documentation.
  registerResponseHeaders(app);
  registerErrorHandler(app);
  registerJsonParser(app);
  registerBodyGuard(app);
  // With a logger (any level), Fastify reports every finished answer to the request log, which counts it
  // for the metrics too; without one (tests' silent apps) it reports none, and the metrics keep a hook.
  registerMetrics(app, { token: config.metricsToken, answers: logger ? requestLog : undefined });
  await registerOpenApi(app, { version: VERSION, publicUrl: config.publicUrl });

  // Jobs (main.ts defines them itself in a worker, which builds no app).
  await defineJobs({ ...deps, log: app.log });

  // Row change notices for this process's caches, and the fence after each request that may write.
  const changes = await openChangeFeed(database);
  app.addHook('onClose', () => changes.close());
  registerChangeFence(app, changes);
  app.decorate('changes', changes);

  // Services.
  const profiles = createProfileService(database.db);
  const cache = await createSessionCache(deps.bus);
  app.addHook('onClose', () => cache.close());
  const auth = createAuthService({ db: database.db, tokens: createTokenSigner(config.jwtSecret), profiles, cache });
  registerAuthGuard(app, auth, [launchScopeCheck, mustChangePasswordCheck]);
  const streams = await attachStreamSockets({ httpServer: app.server, bus: deps.bus, verify: auth.verify, registerTimeoutMs: deps.socketRegisterTimeoutMs });
  app.decorate('streams', streams);
  // Open sockets would keep the HTTP server from closing: drop them before it closes.
  app.addHook('preClose', async () => streams.closeSockets());
  app.addHook('onClose', async () => streams.close());
  // A Socket.IO turn runs on the process holding its socket; other processes hand theirs over.
  const handoff = await createTurnHandoff({ bus: deps.bus, holds: streams.holds, log: app.log });
  app.addHook('preClose', () => handoff.stopServing());
  app.addHook('onClose', () => handoff.close());
  // Every tab of a person (sockets and SSE streams, any process), and the approval cards sent to them.
  const tabs = await createPersonTabs({ bus: deps.bus, emitToSockets: streams.emitToUser, onError: (err) => app.log.warn({ err }, 'tab event not sent') });
  app.addHook('onClose', () => tabs.close());
  const approvals = await createApprovalGate({ db: database.db, bus: deps.bus, tabs, log: app.log });
  app.addHook('onClose', () => approvals.close());

  // Route families.
  const db = database.db;
  registerHealth(app, { version: VERSION, database, redis: () => deps.bus.kind === 'redis' });
  const webClientDir = deps.webClientDir ?? WEB_DIST_DIR;
  const { throttle } = await identityRoutes(app, { ...deps, auth, cache, profiles, webClient: isWebClientBuilt(webClientDir) });
  registerUsers(app, { profiles, changes });
  registerHistory(app, { db });
  await registerAssistants(app, { db, profiles });
  registerCustomModels(app, { db, secrets: deps.secrets, policy: deps.outbound.policy });
  // Connectors (MCP servers): the catalog a turn takes is returned, and on the app as app.connectors.
  const connectors = registerConnectors(app, { db, secrets: deps.secrets, changes, outbound: deps.outbound, settings: config.connectors });
  registerAdminUsers(app, { db, cache, startingCredits: config.billing.startingCredits, database });
  registerCredits(app, { db });
  registerTwins(app, { db });
  registerMemberships(app, { db, cache, profiles });
  registerSettings(app, { db });
  registerMemory(app, { db });
  registerEntitlements(app, { db });
  registerAccounts(app, { db });
  registerQuestions(app, { db });
  registerLti(app, { db, outbound: deps.outbound, publicUrl: config.publicUrl, auth, startingCredits: config.billing.startingCredits, webClientDir });
  registerCharts(app, { db, now: deps.now });
  registerApprovals(app, { gate: approvals });
  const subscription = registerSubscription(app, { db, secrets: deps.secrets, config: config.subscription });
  // The tools a turn offers (connectors, approval cards, built-ins): chat turns and voice-agent calls alike.
  const tools = { catalog: connectors, gate: approvals, builtins: createBuiltinToolRunners({ database, changes }) };
  const providers = createContextProviders({ database, jobs: deps.jobs, log: app.log, changes });
  const conversations = await registerConversations(app, { bus: deps.bus, streamLog: deps.streamLog, resumeGraceSeconds: config.resume.graceSeconds, db: database.db, secrets: deps.secrets, deploymentModel: config.model, outbound: deps.outbound, deploymentPrice: config.billing.deploymentPrice, streams, handoff, providers, heartbeatMs: config.sseHeartbeatMs, changes, subscriptionModel: subscription.subscriptionModelFor, tools, approvalTimeoutMs: config.approvalTimeoutMs, tabs, processId: deps.liveness?.id });
  registerEmbed(app, { db, auth, startingCredits: config.billing.startingCredits, sessionsPerHour: config.embed.sessionsPerHour });
  registerBranding(app, { db, idpConfigured: (twinId) => hasIdentityProvider(db, config, twinId) });
  await registerFiles(app, deps);
  await registerTranscription(app, deps);
  await registerVoiceAgent(app, { db, bus: deps.bus, tools, config });
  const voice = await registerRealtimeVoice(app, { turn: conversations.turnDeps, bus: deps.bus, voice: config.voice, minuteMs: deps.voiceMinuteMs, liveness: deps.liveness });
  registerPersonalData(app, { db, jobs: deps.jobs, storage: deps.storage, secrets: deps.secrets, throttle, now: deps.now, endVoiceCalls: voice.endCalls });

  // The web client for people at `/` (web/dist, built by the start command), when it is built.
  registerWebClient(app, webClientDir);

  return app;
}
