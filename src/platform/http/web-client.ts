// The web client for people (web/, built into web/dist by the start command) served at `/`: hashed
// assets under /assets with long-lived cache headers, index.html for every client route (the client's
// router takes it from there), and nothing of /api, /socket.io or /metrics: those keep their own
// answers, and an unknown /api route still answers the JSON 404.
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { addDocumentHeaders } from './security-headers.js';

/** Where `npm start` builds the client. */
export const WEB_DIST_DIR = path.resolve(import.meta.dirname, '../../../web/dist');

const SERVER_PREFIXES = ['/api/', '/api', '/socket.io/', '/metrics'];

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/**
 * The page's own policy: scripts and styles of this origin only, so a model's answer that got past the
 * client's sanitizer still cannot run script. Images may be data: or blob: (the QR code, previews).
 */
export const WEB_CLIENT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self' ws: wss:",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'self'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Whether `dir` holds a built client (its index.html): what registerWebClient serves. */
export const isWebClientBuilt = (dir: string = WEB_DIST_DIR): boolean => existsSync(path.join(dir, 'index.html'));

/** Serves the built client from `dir` when it holds an index.html; otherwise registers nothing. */
export function registerWebClient(app: FastifyInstance, dir: string = WEB_DIST_DIR): boolean {
  const indexFile = path.join(dir, 'index.html');
  if (!isWebClientBuilt(dir)) {
    app.log.warn({ dir }, 'the web client is not built (npm start builds it); serving the API only');
    return false;
  }
  const root = path.resolve(dir);
  // Read once: the page changes only with a new build, which is a new start.
  const indexHtml = readFileSync(indexFile);

  const sendIndex = (reply: FastifyReply) =>
    addDocumentHeaders(reply)
      .header('content-type', CONTENT_TYPES['.html'])
      .header('cache-control', 'no-cache')
      .header('content-security-policy', WEB_CLIENT_CSP)
      .send(indexHtml);

  app.get('/*', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
    const pathname = decodedPath(request.url);
    if (pathname === null) return reply.callNotFound();
    if (SERVER_PREFIXES.some((prefix) => pathname === prefix || pathname.startsWith(prefix))) return reply.callNotFound();
    const file = path.resolve(root, `.${pathname}`);
    const inside = file.startsWith(root + path.sep);
    const stat = inside ? statOf(file) : undefined;
    if (stat?.isFile() && path.basename(file) !== 'index.html') {
      const hashed = pathname.startsWith('/assets/');
      return addDocumentHeaders(reply)
        .header('content-type', CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream')
        .header('content-length', stat.size)
        .header('cache-control', hashed ? IMMUTABLE : 'no-cache')
        .send(createReadStream(file));
    }
    // A missing asset is a 404, not the page (a stale tab asking for an old bundle must see it fail).
    if (pathname.startsWith('/assets/') || path.extname(pathname) !== '') return reply.callNotFound();
    return sendIndex(reply);
  });
  return true;
}

function decodedPath(url: string): string | null {
  try {
    return decodeURIComponent(url.split('?')[0]);
  } catch {
    return null;
  }
}

function statOf(file: string) {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
