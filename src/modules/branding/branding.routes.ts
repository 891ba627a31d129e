// POST /api/agent/branding: the public branding record of a twin, found by its publicId, no token needed.
// Administrators edit these fields through PUT /api/admin/institution/{id}.
import { z } from 'zod';
import { failures, type App } from '../../platform/http/schemas.js';
import { brandingSchema } from './branding.schemas.js';
import type { BrandingService } from './branding.service.js';

export function brandingRoutes(app: App, branding: BrandingService): void {
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
    async (request) => branding.byPublicId(request.body.publicId),
  );
}
