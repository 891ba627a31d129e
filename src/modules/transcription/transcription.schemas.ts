import { z } from 'zod';

export const transcriptSchema = z.object({
  success: z.literal(true),
  text: z.string().describe('what was said'),
  durationMs: z.number().int().describe('how long the transcription took, in milliseconds'),
});
