// POST /api/ai/transcribe: one-shot speech-to-text for a signed-in person.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import { transcriptSchema } from './transcription.schemas.js';
import type { AudioPart, TranscriptionService } from './transcription.service.js';

/** Transcriptions one person may ask for per minute (counted on the shared rate-limit store). */
export const TRANSCRIPTIONS_PER_MINUTE = 20;

export function transcriptionRoutes(app: App, service: TranscriptionService, perMinute = TRANSCRIPTIONS_PER_MINUTE): void {
  app.post(
    '/api/ai/transcribe',
    {
      schema: {
        tags: ['ai'],
        summary: 'Speech to text, once',
        description:
          "multipart/form-data: `file` (the audio), optional `language` ('en', 'pt-BR'). The audio is streamed to the deployment's " +
          'transcription provider and dropped: nothing is stored or logged. Refusals: 400 NO_FILE, EMPTY_FILE, INVALID_LANGUAGE, ' +
          'INVALID_MULTIPART; 413 AUDIO_TOO_LARGE (TRANSCRIBE_LIMIT); 415 UNSUPPORTED_AUDIO (checked by content: WAV, MP3, OGG/Opus, WebM, M4A, FLAC); ' +
          `429 past ${perMinute} a minute per person; 502 TRANSCRIBE_FAILED; 503 TRANSCRIBE_NOT_CONFIGURED.`,
        consumes: ['multipart/form-data'],
        body: z.unknown().describe('the multipart body'),
        response: { 200: transcriptSchema, ...failures(400, 401, 413, 415, 429, 502, 503) },
      },
      config: {
        // After the auth guard (onRequest), so the count is the person's.
        rateLimit: { max: perMinute, timeWindow: 60_000, hook: 'preHandler', keyGenerator: (request) => `transcribe:${request.actor?.userId ?? request.ip}` },
      },
    },
    async (request) => {
      actorOf(request);
      const transcript = await service.transcribe(request.parts() as AsyncIterable<AudioPart>);
      return { success: true as const, ...transcript };
    },
  );
}
