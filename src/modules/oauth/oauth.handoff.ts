// A browser's third-party sign-in handed to the web client. The provider sends the browser back to the
// callback, a page load: a JSON answer there would be a dead end (and a token on screen). So when the
// callback is loaded as a page, its outcome (a session token, a second-factor challenge, or a failure)
// is sealed with the deployment's key into a short-lived HttpOnly cookie and the browser is sent on to
// the web client's /signin/oauth, which collects it with POST /api/auth/oauth/handoff. Nothing is
// stored on the server, so any process may answer either request. docs/decisions.md, "Sign-in
// and sessions", the callback in a browser.
import type { FastifyRequest } from 'fastify';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { AppError, BadRequestError, ForbiddenError } from '../../platform/http/errors.js';
import type { SignedIn } from '../auth/auth.service.js';
import type { MfaRequired } from '../auth/signin.service.js';

export const HANDOFF_COOKIE = 'dt_oauth_handoff';
/** Long enough for the web client's page to load and ask; a cookie left behind is useless after. */
export const HANDOFF_TTL_MS = 60_000;
/** The web client's page that collects the outcome. */
export const HANDOFF_PAGE = '/signin/oauth';

/** What the callback produced, as the web client collects it. */
export type HandoffOutcome =
  | { kind: 'signed-in'; token: string }
  | { kind: 'mfa'; challenge: Pick<MfaRequired, 'mfaToken' | 'mfaMethod' | 'methods'> }
  | { kind: 'failed'; status: number; message: string; code?: string };

/** The callback was loaded as a page (the provider's redirect), not fetched by a program. */
export function isPageLoad(request: FastifyRequest): boolean {
  const mode = request.headers['sec-fetch-mode'];
  if (mode) return mode === 'navigate';
  return (request.headers.accept ?? '').includes('text/html');
}

/** The outcome of the callback's sign-in: what it answered, or the failure it threw (an unexpected error is rethrown). */
export async function outcomeOf(signIn: Promise<SignedIn | MfaRequired>): Promise<HandoffOutcome> {
  try {
    const answer = await signIn;
    if ('mfaRequired' in answer) return { kind: 'mfa', challenge: { mfaToken: answer.mfaToken, mfaMethod: answer.mfaMethod, methods: answer.methods } };
    return { kind: 'signed-in', token: answer.token };
  } catch (error) {
    // The failures the sign-in names (a used state, an unconfirmed code, an unreachable provider): the page shows them.
    if (error instanceof AppError) return { kind: 'failed', status: error.status, message: error.message, code: error.code };
    throw error;
  }
}

export function sealOutcome(secrets: SecretBox, outcome: HandoffOutcome, now = Date.now()): string {
  return secrets.encrypt(JSON.stringify({ ...outcome, expiresAt: now + HANDOFF_TTL_MS }));
}

const invalid = () => new BadRequestError('No sign-in to collect: it was collected already, or it expired; start again', 'OAUTH_HANDOFF_INVALID');

/** The sealed outcome: a missing, altered or expired one answers 400 OAUTH_HANDOFF_INVALID. */
export function openOutcome(secrets: SecretBox, sealed: string | undefined, now = Date.now()): HandoffOutcome {
  if (!sealed) throw invalid();
  let opened: HandoffOutcome & { expiresAt?: unknown };
  try {
    opened = JSON.parse(secrets.decrypt(sealed)) as HandoffOutcome & { expiresAt?: unknown };
  } catch {
    throw invalid();
  }
  if (typeof opened.expiresAt !== 'number' || opened.expiresAt <= now) throw invalid();
  const { expiresAt: _expiresAt, ...outcome } = opened;
  return outcome as HandoffOutcome;
}

/**
 * The handoff answers pages of this service only. The cookie is SameSite=Lax, so another site's page
 * never sends it; a page of the same site on another origin would (and CORS lets any origin read the API),
 * so an Origin that is not the service's own is refused.
 */
export function checkOrigin(request: FastifyRequest, publicUrl: string): void {
  const origin = request.headers.origin;
  if (!origin) return;
  const own = new Set([new URL(publicUrl).origin, `${request.protocol}://${request.headers.host ?? ''}`]);
  if (!own.has(origin)) throw new ForbiddenError('A sign-in is collected by the service\'s own pages only', 'OAUTH_HANDOFF_ORIGIN');
}

/** The outcome as the handoff answers it: a session token, the second-factor challenge, or the failure thrown. */
export function answerOf(outcome: HandoffOutcome): { success: true; token: string } | MfaRequired {
  if (outcome.kind === 'signed-in') return { success: true, token: outcome.token };
  if (outcome.kind === 'mfa') return { success: true, mfaRequired: true, ...outcome.challenge };
  throw new AppError(outcome.status, outcome.message, outcome.code);
}
