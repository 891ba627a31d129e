// Wire shapes of the voice-agent routes (contract: "Voice and speech").
import { z } from 'zod';

const text = (max: number) => z.string().min(1).max(max);

export const toolBody = z.object({
  voiceAgentId: text(200).describe("the twin's voice_agent_id (branding)"),
  callId: text(200).describe("the voice agent's id of the live call"),
  userId: z.string().min(1).max(64).describe('the person on the call: a member of that twin'),
  tool: text(64).describe('the tool key, as GET /api/admin/tools lists it'),
  arguments: z.record(z.string(), z.unknown()).optional().describe("the tool's arguments"),
});

export const endedBody = z.object({
  voiceAgentId: text(200),
  callId: text(200),
});

export const toolAnswer = z.union([
  z.object({ success: z.literal(true), result: z.string().describe('what the tool answered (text, as a chat model reads it)') }),
  z.object({
    success: z.literal(false),
    code: z.enum(['DECLINED', 'EXPIRED', 'CANCELLED']).describe('the person declined, did not decide in time, or the call ended'),
    message: z.string(),
  }),
]);

export const endedAnswer = z.object({ success: z.literal(true) });
