// The page a launch answers: it hands the session token to the web client without a cookie (it stores
// it where the web client reads it, in this origin's storage, or in the URL fragment when storage is
// refused, and opens the chat) and may be framed by
// the course pages of the twin's registered platforms only.
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** The web client's storage key of the session token (web/src/api/client.ts). */
const TOKEN_KEY = 'dt.token';

/** JSON for inside a <script>: no `<`, so no `</script>` can end it early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** `chatPath`: where the chat opens (the twin's frameable page of the web client). */
export function sendLaunchPage(reply: FastifyReply, launch: { token: string; frameOrigins: string[]; twinName: string; chatPath: string }): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  const ancestors = ["'self'", ...launch.frameOrigins].join(' ');
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>Opening ${escapeHtml(launch.twinName)}</title></head>
<body>
<p>Opening ${escapeHtml(launch.twinName)}…</p>
<script nonce="${nonce}">
(function () {
  var token = ${scriptJson(launch.token)};
  var key = ${scriptJson(TOKEN_KEY)};
  var chat = ${scriptJson(launch.chatPath)};
  var stored = false;
  try { window.localStorage.setItem(key, token); stored = window.localStorage.getItem(key) === token; } catch (e) {}
  // Storage refused (a frame whose site data is blocked): the web client takes it from the fragment, which no server sees.
  window.location.replace(stored ? chat : chat + '#' + key + '=' + encodeURIComponent(token));
})();
</script>
</body>
</html>`;
  reply.removeHeader('x-frame-options');
  return reply
    .status(200)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`,
    })
    .send(html);
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
