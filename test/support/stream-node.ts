// A real API process, as `src/main.ts api` starts it (configuration from the environment, the
// platform, the app), for the multi-process streaming test. Never part of the service.
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { closePlatform, openPlatform } from '../../src/platform/platform.js';

const config = loadConfig();
const logger = pino({ level: config.logLevel });
const platform = await openPlatform(config, logger);
const app = await buildApp({ ...platform, logger: { level: config.logLevel } });

await app.listen({ port: config.port, host: config.host });
const stop = async () => {
  await app.close();
  await closePlatform(platform);
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
