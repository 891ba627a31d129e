// Wire shapes of POST /api/agent/embed/session.
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
