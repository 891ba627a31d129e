// A real API process (as `src/main.ts api`: configuration from the environment, the platform, the
// app) plus one test-only route that streams a model answer to a socket the way the Q&A route will:
// isLive → beginAnswer → streamAnswer (onDelta → emitChunk, cancel_request → abort) → endAnswer.
// Spawned by the multi-process streaming test; never part of the service.
import pino from 'pino';
import { z } from 'zod';
import { buildApp } from '../../src/app.js';
import { createModelRegistry } from '../../src/ai/registry.js';
import { loadConfig } from '../../src/config.js';
import { streamAnswer } from '../../src/modules/conversations/stream-turn.js';
import { actorOf } from '../../src/platform/http/auth-guard.js';
import { closePlatform, openPlatform } from '../../src/platform/platform.js';

const config = loadConfig();
const logger = pino({ level: config.logLevel });
const platform = await openPlatform(config, logger);
const app = await buildApp({ ...platform, logger: { level: config.logLevel } });
const models = createModelRegistry(config.model);

app.post(
  '/api/test-only/stream',
  { schema: { body: z.object({ socketId: z.string(), question: z.string() }) } },
  async (request) => {
    const actor = actorOf(request);
    const { socketId, question } = request.body;
    const { streams } = app;
    if (!(await streams.isLive(socketId, actor.userId))) return { success: true, streamingFailed: true };
    const controller = new AbortController();
    const off = streams.onCancel({ userId: actor.userId, socketId }, () => controller.abort());
    streams.beginAnswer(socketId);
    let sent = 0;
    try {
      const result = await streamAnswer({
        model: models.resolveModel(),
        messages: [{ role: 'user', content: question }],
        signal: controller.signal,
        onDelta: (delta, prompt) => {
          if (streams.emitChunk(socketId, { prompt, delta, type: 'STREAM' })) sent += 1;
        },
      });
      return { success: true, text: result.text, cancelled: result.cancelled, sent, pid: process.pid };
    } finally {
      off();
      streams.endAnswer(socketId);
    }
  },
);

await app.listen({ port: config.port, host: config.host });
const stop = async () => {
  await app.close();
  await closePlatform(platform);
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
