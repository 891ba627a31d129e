// Wire shape of a person's preferences (contract additions), field for field.
import { z } from 'zod';
import { objectId } from '../../platform/http/schemas.js';

export const settingsSchema = z.object({
  dark_mode: z.boolean(),
  pin_ui: z.boolean(),
  use_location: z.boolean(),
  browser_voice: z.string().max(200),
  rt_voice: z.string().max(200),
  remember_history_count: z.number().int().min(0).max(100),
  userMemoryEnabled: z.boolean().describe('behaviour 7: off = no personal memory saved or used'),
  voiceAssistantId: objectId.nullable().describe('the assistant chosen for voice in the current twin; cleared on switching twins'),
});
export type Settings = z.infer<typeof settingsSchema>;
export const settingsResult = z.object({ success: z.literal(true), data: settingsSchema });
