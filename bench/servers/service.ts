// The service as deployed (one API process), on PostgreSQL when BENCH_DATABASE_URL is set, else PGlite.
// Creates one person, signs in, and reports the port and token to the parent.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openPlatform } from '../../src/platform/platform.js';
import { bootstrapFirstAdmin } from '../../src/modules/users/bootstrap.js';

const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
const config = loadConfig({
  DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dt-bench-')),
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
  REDIS_URL: process.env.BENCH_REDIS_URL ?? '',
  JWT_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  LOG_LEVEL: 'silent',
});
const platform = await openPlatform(config, { info: () => {}, error: () => {} });
await bootstrapFirstAdmin(platform.database.db, { email, password: 'bench-password' });
const app = await buildApp({ ...platform, logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const signIn = await app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email, password: 'bench-password' } });
const address = app.server.address();
process.send?.({ port: typeof address === 'object' && address ? address.port : 0, token: signIn.json().token, database: platform.database.kind });
