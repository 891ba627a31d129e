// The embed page's HTML and its headers: the chat page /embed/{publicId} frames, and the message an
// unknown or inactive twin shows instead. Its frame-ancestors are the origins of exactly the twin's
// publicAuthorizedUrls ('none' when there are none); each is parsed as a URL and written as its origin,
// so a stored entry can never add a directive to the policy.
import type { TwinRow } from '../twins/twins.tables.js';
import { originOf } from './embed.service.js';

/** The distinct origins of the twin's authorized URLs, in their order; entries that are not http(s) URLs are skipped. */
export function authorizedOrigins(urls: readonly string[]): string[] {
  return [...new Set(urls.map(originOf).filter((origin): origin is string => origin !== null))];
}

/** The page's policy: its own script and style only, talking to this service only, framed by those origins only. */
export function embedPagePolicy(origins: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${origins.length > 0 ? origins.join(' ') : "'none'"}`,
  ].join('; ');
}

export const UNAVAILABLE_MESSAGE = 'This Digital Twin is not available.';

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] as string);

function document(title: string, body: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)}</title><link rel="stylesheet" href="/embed/assets/frame.css"></head><body>${body}</body></html>`
  );
}

/** The chat page of an active twin: what the frame script needs, as data (the policy runs no inline script). */
export function chatPage(twin: Pick<TwinRow, 'name' | 'embedTranscriptEnabled'>, origins: readonly string[]): string {
  const config = { origins, liveTranscript: twin.embedTranscriptEnabled };
  return document(
    twin.name,
    `<main id="twin-embed" data-config="${escapeHtml(JSON.stringify(config))}">` +
      `<header>${escapeHtml(twin.name)}</header>` +
      '<p id="twin-status" role="status">Connecting…</p>' +
      '<div id="twin-log" aria-live="polite"></div>' +
      '<form id="twin-form" hidden><input id="twin-input" name="question" autocomplete="off" aria-label="Your question" placeholder="Ask a question">' +
      '<button type="submit">Send</button></form></main>' +
      '<script src="/embed/assets/frame.js" defer></script>',
  );
}

/** An unknown or inactive twin: the same message for both, naming no twin. */
export function unavailablePage(): string {
  return document('Digital Twin', `<p class="twin-unavailable" role="status">${UNAVAILABLE_MESSAGE}</p>`);
}
