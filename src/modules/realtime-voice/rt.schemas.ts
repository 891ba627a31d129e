import { z } from 'zod';
import { objectId } from '../../platform/http/schemas.js';

export const sessionBody = z
  .object({
    assistantId: objectId.optional().describe('the assistant the session runs (behaviour 1); New Conversation when out of scope'),
    voice: z.string().trim().min(1).max(200).optional().describe("the provider's voice; else the person's rt_voice, the twin's rtVoice, then alloy"),
  })
  .strict();

export const sessionAnswer = z.object({
  success: z.literal(true),
  sessionId: z.string(),
  mode: z.literal('realtime'),
  url: z.string().describe('the relay to open as a WebSocket on this service (add token=, or offer the subprotocol twin-token.<token>)'),
  token: z.string().describe('valid once, for 60 seconds'),
  expiresAt: z.string().describe("the token's expiry (ISO 8601)"),
  voice: z.string(),
  instructionsPreview: z.string().optional().describe("the start of the assistant's instructions"),
});

export const endAnswer = z.object({ success: z.literal(true) });
