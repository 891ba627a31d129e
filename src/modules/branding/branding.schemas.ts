// Wire shape of a twin's public branding record.
import { z } from 'zod';

export const brandingSchema = z
  .object({
    picture: z.string(),
    picture_animated: z.string(),
    picture_bg: z.string(),
    picture_dark_bg: z.string(),
    voice_agent_id: z.string(),
    about: z.string(),
    ainame: z.string(),
    status: z.enum(['active', 'inactive']),
    idpEnabled: z.boolean().describe('true only when the deployment has the identity provider configured'),
    questions: z
      .array(z.object({ text: z.string(), assistantId: z.string().nullable() }))
      .describe("the twin's suggested questions in order (administered at /api/admin/questions)"),
  })
  .describe('Branding of a Digital Twin');

export type BrandingWire = z.infer<typeof brandingSchema>;
