// Process entry: `all` (default: API + Socket.IO + job worker), `api`, or `worker`.
// SIGTERM/SIGINT stop accepting, let in-flight requests finish up to SHUTDOWN_GRACE_MS, then close.
import pino from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type ProcessRole } from './config.js';
import { closePlatform, openPlatform } from './platform/platform.js';
import { bootstrapFirstAdmin } from './modules/users/bootstrap.js';
import { defineJobs, scheduleJobs } from './jobs.js';
import { setupFiles } from './modules/files/files.module.js';

const ROLES: ProcessRole[] = ['all', 'api', 'worker'];

async function main(): Promise<void> {
  const role = (process.argv[2] ?? process.env.ROLE ?? 'all') as ProcessRole;
  if (!ROLES.includes(role)) {
    console.error(`Unknown process role "${role}": use one of ${ROLES.join(', ')}`);
    process.exit(1);
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel });
  const platform = await openPlatform(config, logger);

  const bootstrap = await bootstrapFirstAdmin(platform.database.db, config.admin);
  if (bootstrap.created) logger.info({ email: config.admin?.email }, 'created the first super admin and "Default Twin"');

  const app = role === 'worker' ? undefined : await buildApp({ ...platform, logger: { level: config.logLevel } });
  // Without an app, the jobs the modules define are defined here (buildApp defines them otherwise).
  if (!app) {
    defineJobs({ ...platform, log: logger });
    await setupFiles(platform, logger);
  }
  await platform.jobs.start({ work: role !== 'api' });
  await scheduleJobs(platform.jobs, platform.database);
  if (app) await app.listen({ port: config.port, host: config.host });
  logger.info({ role, port: app ? config.port : undefined }, 'service started');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error('in-flight work did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 5_000);
    deadline.unref();
    try {
      if (app) await closeWithin(app.close(), config.shutdownGraceMs);
      await closePlatform(platform);
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

function closeWithin(closing: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([closing, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
}

main().catch((error) => {
  console.error('Failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
