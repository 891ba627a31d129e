// GET /lti/{publicId}: the web client's page, as a launch opens it inside a course page. The same page
// as `/`, with one difference: the origins of the twin's registered platforms may frame it (the web
// client's own page may be framed by itself only). Registered only when the web client is built.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { NotFoundError } from '../../platform/http/errors.js';
import type { App } from '../../platform/http/schemas.js';
import { addDocumentHeaders } from '../../platform/http/security-headers.js';
import { isWebClientBuilt, WEB_CLIENT_CSP } from '../../platform/http/web-client.js';
import type { Database } from '../../platform/db/client.js';
import { findTwinByPublicId } from '../twins/twins.repo.js';
import { platformsOfTwin } from './lti.repo.js';

/** The origins that may frame a twin's launch pages: those of its platforms' issuers and login endpoints. */
export async function frameOriginsOf(db: Database, twinId: string): Promise<string[]> {
  const origins = new Set<string>();
  for (const row of await platformsOfTwin(db, twinId)) for (const url of [row.issuer, row.authLoginUrl]) if (URL.canParse(url)) origins.add(new URL(url).origin);
  return [...origins];
}

export function ltiChatPageRoute(app: App, deps: { db: Database; webClientDir: string }): void {
  if (!isWebClientBuilt(deps.webClientDir)) return;
  const indexHtml = readFileSync(path.join(deps.webClientDir, 'index.html'));
  app.get(
    '/lti/:publicId',
    { config: { auth: 'none' }, schema: { hide: true, params: z.object({ publicId: z.uuid() }) } },
    async (request, reply) => {
      const twin = await findTwinByPublicId(deps.db, request.params.publicId);
      if (!twin || twin.status !== 'active') throw new NotFoundError('Digital Twin not found');
      const ancestors = ["'self'", ...(await frameOriginsOf(deps.db, twin.id))].join(' ');
      reply.removeHeader('x-frame-options');
      return addDocumentHeaders(reply)
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('content-security-policy', WEB_CLIENT_CSP.replace("frame-ancestors 'self'", `frame-ancestors ${ancestors}`))
        .send(indexHtml);
    },
  );
}
