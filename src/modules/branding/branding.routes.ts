// POST /api/agent/branding: the public branding record of a twin, found by its publicId, no token needed.
// Administrators edit these fields through PUT /api/admin/institution/{id}.
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import { AppError } from '../../platform/http/errors.js';
import { failures, type App } from '../../platform/http/schemas.js';
import { findInstitutionByPublicId } from '../institutions/institutions.repo.js';
import type { InstitutionRow } from '../institutions/institutions.tables.js';

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
  })
  .describe('Branding of a Digital Twin');

export interface BrandingDeps {
  db: Database;
  /** Whether third-party sign-in is configured on this deployment (only a boolean is ever shown). */
  /** Whether third-party sign-in is configured for the deployment or this twin (only ever a boolean). */
  idpConfigured: (institutionId: string) => Promise<boolean>;
}

export function presentBranding(row: InstitutionRow, idpEnabled: boolean): z.infer<typeof brandingSchema> {
  return {
    picture: row.picture,
    picture_animated: row.pictureAnimated,
    picture_bg: row.pictureBg,
    picture_dark_bg: row.pictureDarkBg,
    voice_agent_id: row.voiceAgentId,
    about: row.about,
    ainame: row.ainame,
    status: row.status,
    idpEnabled,
  };
}

export function brandingRoutes(app: App, { db, idpConfigured }: BrandingDeps): void {
  app.post(
    '/api/agent/branding',
    {
      config: { auth: 'none', validationMessage: 'Invalid publicId' },
      schema: {
        tags: ['branding'],
        summary: 'Branding of a Digital Twin by its publicId',
        description:
          'No token. 200: the branding record (an inactive twin answers with status inactive so the page can say so). ' +
          '400 {success: false, message: "Invalid publicId", error} for a malformed UUID; 404 {success: false, message: ' +
          '"Digital Twin not found", error} for an unknown or deleted twin.',
        security: [],
        body: z.object({ publicId: z.uuid() }),
        response: { 200: brandingSchema, ...failures(400, 404) },
      },
    },
    async (request) => {
      const twin = await findInstitutionByPublicId(db, request.body.publicId);
      if (!twin) throw new AppError(404, 'Digital Twin not found', 'NOT_FOUND', undefined, 'No Digital Twin has this publicId');
      return presentBranding(twin, await idpConfigured(twin.id));
    },
  );
}
