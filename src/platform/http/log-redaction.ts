// What the logs never hold: the value of a query parameter named like a credential. Links the service
// mails or hands out carry one (an export download's `?token=`, a password reset's, a provider's `code`
// and `state` on the sign-in callback), and whoever reads the logs could use it for its lifetime. The
// request line (request-log.ts) and every line that logs a request through pino's `req` serializer
// (a failed request's error line) write the URL through `redactUrl`: the value becomes `[redacted]`,
// the rest of the URL stays as sent.
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

export const REDACTED = '[redacted]';

/**
 * A parameter name that looks like a credential, case-insensitive and anywhere in the name
 * (`access_token`, `apiKey`, `X-Amz-Signature`, `client_secret`, `passwd`), or Azure's bare `sig`.
 */
const SECRET_NAME = /token|code|key|secret|passw|pwd|signature|state|auth|credential|session|jwt|otp|^sig$/i;

function isSecretName(raw: string): boolean {
  let name = raw;
  if (raw.includes('%') || raw.includes('+')) {
    try {
      name = decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      // A name that does not decode is judged as sent.
    }
  }
  return SECRET_NAME.test(name);
}

/** The URL with the value of every credential-like query parameter replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const pairs = url.slice(start + 1).split('&');
  let changed = false;
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    const equals = pair.indexOf('=');
    if (equals === -1 || equals === pair.length - 1) continue;
    const name = pair.slice(0, equals);
    if (!isSecretName(name)) continue;
    pairs[i] = `${name}=${REDACTED}`;
    changed = true;
  }
  return changed ? `${url.slice(0, start)}?${pairs.join('&')}` : url;
}

/** Fastify's own `req` serializer, with the URL redacted: every line that logs a request writes this. */
export function serializeRequest(request: FastifyRequest) {
  const version = request.headers?.['accept-version'];
  return {
    method: request.method,
    url: redactUrl(request.url),
    version: typeof version === 'string' ? version : undefined,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** The service's logger options, with the redacting `req` serializer. */
export function withLogRedaction(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (!logger) return logger;
  const options = logger === true ? {} : logger;
  // Fastify types the serializer's argument as the raw request; what it hands it is its own request (its default reads `ip` and `host`).
  const req = (raw: unknown) => serializeRequest(raw as FastifyRequest);
  return { ...options, serializers: { ...options.serializers, req } };
}
