// Wire shapes of POST /api/agent/embed/session and POST /api/agent/embed/guide.
import { z } from 'zod';
import { profileSchema } from '../users/profile.schemas.js';

export const embedSessionBody = z.object({
  publicId: z.uuid(),
  launchToken: z.string().min(1).max(512).optional(),
});

export const embedSessionResponse = z.union([
  z.object({ success: z.literal(true), token: z.string(), visitor: z.literal(true) }),
  z.object({ success: z.literal(true), token: z.string(), visitor: z.literal(false), profile: profileSchema, launchScope: z.literal(true) }),
]);

export const GUIDANCE_MAX_CHARS = 2000;

export const embedGuideBody = z.object({
  text: z.string().trim().min(1).max(GUIDANCE_MAX_CHARS).describe('what the next answer should take into account (not shown as the person\'s words)'),
});

export const embedGuideResponse = z.object({ success: z.literal(true) });
