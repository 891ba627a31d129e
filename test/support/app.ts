// Boots the real app for a test file: its own cloned database, real bus/mail/storage/jobs adapters
// (Redis bus when TEST_REDIS_URL is set), silent logs, fakes only at the network edge.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type AppDeps } from '../../src/app.js';
import { loadConfig, type StartedConfig } from '../../src/config.js';
import { withSecrets } from '../../src/platform/secrets-at-start.js';
import { createSecretBox } from '../../src/platform/crypto/secrets.js';
import { createJobQueue } from '../../src/platform/jobs/queue.js';
import { createMailer } from '../../src/platform/mail/mailer.js';
import { createOutbound } from '../../src/platform/net/outbound.js';
import { createProcessLiveness } from '../../src/platform/processes/liveness.js';
import type { App } from '../../src/platform/http/schemas.js';
import type { Platform } from '../../src/platform/platform.js';
import { createEventBus } from '../../src/platform/realtime/bus.js';
import { openStreamLog } from '../../src/platform/realtime/open-stream-log.js';
import { createLocalStorage } from '../../src/platform/storage/storage.js';
import { openTestDatabase, type TestDatabase } from './database.js';

/** The deployment endpoint priced at 1 credit per 1,000 tokens each way (it is free unless the operator sets a price). */
export const PRICED = { DEFAULT_PRICE_IN: '1', DEFAULT_PRICE_OUT: '1' } as const;

export interface TestApp {
  app: App;
  platform: Platform & { database: TestDatabase };
  config: StartedConfig;
  dataDir: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Start the job workers (off by default: most tests do not need them polling). */
  workers?: boolean;
  /** Adds routes or hooks before the app is ready (tests of the HTTP platform). */
  beforeReady?: (app: App) => void | Promise<void>;
  /** Sign-in throttling; each app gets its own counter keys, and a roomy request rate unless set. */
  authLimits?: AppDeps['authLimits'];
  socketRegisterTimeoutMs?: number;
  /** The app's clock for time-bound rules (export links, purges): a test moves it instead of sleeping. */
  now?: () => Date;
  /** The app's logger (silent unless given: a test that reads the log passes a stream). */
  logger?: AppDeps['logger'];
  /** Where the built web client is (web/dist unless given). */
  webClientDir?: string;
  /** The length of a voice session's minute in ms (60 s unless given): its hold ticks and RT_MAX_MINUTES. */
  voiceMinuteMs?: number;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-app-'));
  const config = withSecrets(loadConfig({
    DATA_DIR: dataDir,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    REDIS_URL: process.env.TEST_REDIS_URL ?? '',
    ...options.env,
  }));
  const database = await openTestDatabase();
  const bus = await createEventBus({ redisUrl: config.redisUrl });
  // Not exclusive: test files share one PGlite database template, each its own copy, but a file may start several apps on it.
  const liveness = createProcessLiveness(database, { role: 'test', timeoutSeconds: config.processTimeoutSeconds });
  await liveness.start();
  const platform = {
    config,
    database,
    bus,
    mailer: createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, outboxDir: path.join(dataDir, 'outbox') }),
    storage: createLocalStorage(path.join(dataDir, 'files')),
    jobs: createJobQueue(database, { pollingIntervalSeconds: 0.5, liveness }),
    secrets: createSecretBox(config.encryptionKey),
    liveness,
    outbound: createOutbound({ allowedHosts: config.outbound.allowedHosts }),
    streamLog: openStreamLog(bus, config.resume.streamRetentionSeconds),
  };
  const authLimits = { keyPrefix: `test:${randomBytes(6).toString('hex')}:`, requestsPerMinute: 10_000, ...options.authLimits };
  const app = await buildApp({ ...platform, logger: options.logger ?? false, authLimits, socketRegisterTimeoutMs: options.socketRegisterTimeoutMs, now: options.now, webClientDir: options.webClientDir, voiceMinuteMs: options.voiceMinuteMs });
  await options.beforeReady?.(app);
  await app.ready();
  if (options.workers) await platform.jobs.start({ work: true });
  return {
    app,
    platform,
    config,
    dataDir,
    async close() {
      await app.close();
      await platform.jobs.stop({ graceful: false, timeoutMs: 2_000 }).catch(() => {});
      await liveness.stop();
      await platform.streamLog.close();
      await bus.close();
      await platform.mailer.close();
      platform.outbound.fetch.close();
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
