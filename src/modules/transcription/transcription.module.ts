// Wires one-shot speech-to-text: multipart parsing in the route's own scope, with the audio limit.
import multipart from '@fastify/multipart';
import type { Config } from '../../config.js';
import type { App } from '../../platform/http/schemas.js';
import { transcriptionRoutes } from './transcription.routes.js';
import { createTranscriptionService } from './transcription.service.js';

export async function registerTranscription(app: App, deps: { config: Config }): Promise<void> {
  const { provider, limitBytes } = deps.config.transcription;
  const service = createTranscriptionService({ provider, limitBytes });
  await app.register(async (scope: App) => {
    await scope.register(multipart, { limits: { fileSize: limitBytes, files: 1, fields: 5, fieldSize: 1024 } });
    transcriptionRoutes(scope, service);
  });
}
