// The service (one API process, PostgreSQL when BENCH_DATABASE_URL is set) as it runs: the real Q&A
// routes (SSE and Socket.IO), so each streamed answer also pays for its checks, history record and
// charge. The model is the deployment endpoint (BENCH_MODEL_URL).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { hashPassword } from '../../src/modules/auth/passwords.js';
import { insertInstitution, insertMembership } from '../../src/modules/institutions/institutions.repo.js';
import { insertUser, updateUser } from '../../src/modules/users/users.repo.js';
import { openPlatform } from '../../src/platform/platform.js';

const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
const config = loadConfig({
  DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dt-bench-')),
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
  REDIS_URL: process.env.BENCH_REDIS_URL ?? '',
  JWT_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  OPENAI_BASE_URL: process.env.BENCH_MODEL_URL ?? '',
  DEFAULT_MODEL: 'bench-model',
  LOG_LEVEL: 'silent',
});
const platform = await openPlatform(config, { info: () => {}, error: () => {} });
// A person of their own twin, created directly so any database (fresh or reused) will do. Every turn is
// charged: the balance outlasts the run.
const db = platform.database.db;
const user = await insertUser(db, { email, passwordHash: await hashPassword('bench-password'), fname: 'Bench', credits: 1_000_000_000 });
const twin = await insertInstitution(db, { name: `Bench twin ${email}` });
await insertMembership(db, { institutionId: twin.id, userId: user.id, role: 'user' });
await updateUser(db, user.id, { currentInstitutionId: twin.id });
const app = await buildApp({ ...platform, logger: false });

await app.listen({ port: 0, host: '127.0.0.1' });
const signIn = await app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email, password: 'bench-password' } });
const { token, profile } = signIn.json() as { token: string; profile: { _id: string } };
const address = app.server.address();
// The parent may ask for a normal exit (so --cpu-prof can write its profile).
process.on('message', (message) => message === 'exit' && process.exit(0));
process.send?.({ port: typeof address === 'object' && address ? address.port : 0, token, userId: profile._id, database: platform.database.kind });
