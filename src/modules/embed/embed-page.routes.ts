// GET /embed.js (the script a page includes), GET /embed/{publicId} (the chat page it frames) and the
// frame's own script and style. Documents, not API: hidden from the OpenAPI reference like the web
// client's pages. The chat page carries its own policy (embed-page.ts) and no X-Frame-Options, which
// the service sends on every other answer: frame-ancestors says who may frame it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import { addDocumentHeaders } from '../../platform/http/security-headers.js';
import type { App } from '../../platform/http/schemas.js';
import { findTwinByPublicId } from '../twins/twins.repo.js';
import type { Database } from '../../platform/db/client.js';
import { authorizedOrigins, chatPage, embedPagePolicy, unavailablePage } from './embed-page.js';

const BROWSER_DIR = path.join(import.meta.dirname, 'browser');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The browser files, read once at start: they change only with a new release. */
const ASSETS: Record<string, { body: Buffer; type: string }> = {
  'embed.js': { body: readFileSync(path.join(BROWSER_DIR, 'embed.js')), type: 'text/javascript; charset=utf-8' },
  'frame.js': { body: readFileSync(path.join(BROWSER_DIR, 'frame.js')), type: 'text/javascript; charset=utf-8' },
  'frame.css': { body: readFileSync(path.join(BROWSER_DIR, 'frame.css')), type: 'text/css; charset=utf-8' },
};

// Short-lived: a page that includes /embed.js picks up a new release within minutes.
const ASSET_CACHE = 'public, max-age=300';

function sendAsset(reply: FastifyReply, name: keyof typeof ASSETS) {
  const asset = ASSETS[name];
  return addDocumentHeaders(reply).header('content-type', asset.type).header('cache-control', ASSET_CACHE).send(asset.body);
}

export function embedPageRoutes(app: App, db: Database): void {
  const hidden = { config: { auth: 'none' as const }, schema: { hide: true } };

  app.get('/embed.js', hidden, async (_request, reply) => sendAsset(reply, 'embed.js'));
  app.get('/embed/assets/frame.js', hidden, async (_request, reply) => sendAsset(reply, 'frame.js'));
  app.get('/embed/assets/frame.css', hidden, async (_request, reply) => sendAsset(reply, 'frame.css'));

  app.get<{ Params: { publicId: string } }>('/embed/:publicId', hidden, async (request, reply) => {
    const { publicId } = request.params;
    const twin = UUID.test(publicId) ? await findTwinByPublicId(db, publicId) : undefined;
    addDocumentHeaders(reply).removeHeader('x-frame-options').header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store');
    if (!twin || twin.status !== 'active') {
      // Framed nowhere: the embedding page's script shows the same message from the session's 404.
      return reply.code(404).header('content-security-policy', embedPagePolicy([])).send(unavailablePage());
    }
    const origins = authorizedOrigins(twin.publicAuthorizedUrls);
    return reply.header('content-security-policy', embedPagePolicy(origins)).send(chatPage(twin, origins));
  });
}
