// The service (one API process, PostgreSQL when BENCH_DATABASE_URL is set) with two bench-only routes
// wired the way the Q&A routes will be: an SSE answer (openSse + streamAnswer) and a Socket.IO answer
// (isLive + StreamRouter.emitChunk). The model is the deployment endpoint (BENCH_MODEL_URL).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { buildApp } from '../../src/app.js';
import { createModelRegistry } from '../../src/ai/registry.js';
import { loadConfig } from '../../src/config.js';
import { sseFrames } from '../../src/modules/conversations/sse-frames.js';
import { streamAnswer } from '../../src/modules/conversations/stream-turn.js';
import { bootstrapFirstAdmin } from '../../src/modules/users/bootstrap.js';
import { actorOf } from '../../src/platform/http/auth-guard.js';
import { openSse } from '../../src/platform/realtime/sse.js';
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
await bootstrapFirstAdmin(platform.database.db, { email, password: 'bench-password' });
const app = await buildApp({ ...platform, logger: false });
const models = createModelRegistry(config.model);
const question = z.object({ question: z.string(), socketId: z.string().optional() });

app.post('/api/bench/sse', { config: { auth: 'bearer' }, schema: { body: question } }, async (request, reply) => {
  const sse = openSse(request, reply);
  sse.send(sseFrames.connected());
  const result = await streamAnswer({
    model: models.resolveModel(),
    messages: [{ role: 'user', content: request.body.question }],
    signal: sse.signal,
    onDelta: (delta) => sse.send(sseFrames.stream(delta)),
  });
  if (result.failed) sse.send(sseFrames.error(result.failed.message));
  else sse.send(sseFrames.complete({ usage: result.usage.inputTokens + result.usage.outputTokens, outputs: [result.text] }));
  sse.send(sseFrames.done());
  sse.close();
});

app.post('/api/bench/socket', { schema: { body: question } }, async (request) => {
  const actor = actorOf(request);
  const socketId = request.body.socketId ?? '';
  if (!(await app.streams.isLive(socketId, actor.userId))) return { success: true, streamingFailed: true };
  app.streams.beginAnswer(socketId);
  try {
    const result = await streamAnswer({
      model: models.resolveModel(),
      messages: [{ role: 'user', content: request.body.question }],
      onDelta: (delta, prompt) => app.streams.emitChunk(socketId, { prompt, delta, type: 'STREAM' }),
    });
    return { success: !result.failed, text: result.text };
  } finally {
    app.streams.endAnswer(socketId);
  }
});

await app.listen({ port: 0, host: '127.0.0.1' });
const signIn = await app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email, password: 'bench-password' } });
const { token, profile } = signIn.json() as { token: string; profile: { _id: string } };
const address = app.server.address();
process.send?.({ port: typeof address === 'object' && address ? address.port : 0, token, userId: profile._id, database: platform.database.kind });
