// DELETE /api/auth/idp/institution/{institutionId}/revoke: remove a twin's stored provider token.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, messageSchema, objectId, type App } from '../../platform/http/schemas.js';
import type { IdpRevokeService } from './idp-revoke.service.js';

export function idpRevokeRoutes(app: App, service: IdpRevokeService): void {
  app.delete(
    '/api/auth/idp/institution/:institutionId/revoke',
    {
      schema: {
        tags: ['auth'],
        summary: "Revoke an institution's stored identity-provider token",
        description:
          'Needs institutions.edit on the institution. Always removes `cloudServices.idp` locally, then revokes the ' +
          'token at the provider as a best effort: a failure there is logged and does not change the 200. ' +
          'Failures: 403 {message: "Not authorized"} without institutions.edit; 404 {message: "Institution not ' +
          'found"} for an unknown institution or one the caller does not belong to; 500 {message: "Failed to revoke ' +
          'institution access", code: REVOKE_FAILED} when the local removal fails. Nothing stored: 200 as well.',
        params: z.object({ institutionId: objectId }),
        response: { 200: messageSchema, ...failures(400, 401, 403, 404, 500) },
      },
    },
    async (request) => {
      const found = await service.revoke(actorOf(request), request.params.institutionId);
      return { success: true as const, message: found ? 'Institution access revoked' : 'No stored access to revoke' };
    },
  );
}
