// Which routes a restricted session may use. A launch session (a course page's launch token, or a
// twin's own sign-in provider, behaviour 16) has user rights in one twin, and only for that twin's
// day-to-day work, listed here route by route (method + Fastify route pattern). Every other route
// answers 403 LAUNCH_SCOPE_STEP_UP with the twin's id until the person confirms with a code.
// A session whose password must change may only change it (and read its profile, sign out).
// Routes with `auth: 'none'` never reach these checks.
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../platform/http/actor.js';
import type { ActorCheck } from '../../platform/http/auth-guard.js';
import { ForbiddenError } from '../../platform/http/errors.js';

export const LAUNCH_SCOPE_ALLOW_LIST: readonly string[] = [
  // The session itself and the step-up.
  'POST /api/auth/signout',
  'POST /api/auth/mfa-resend',
  'POST /api/auth/mfa-verify',
  'POST /api/user/launch-scope/challenge',
  'POST /api/user/refresh/profile',
  // Conversations (question and answer, streaming, approvals).
  'POST /api/ai/personal/qanda',
  'POST /api/ai/personal-stream/qanda-stream',
  'GET /api/ai/stream/:historyId',
  'POST /api/ai/stream/:historyId/cancel',
  'POST /api/ai/approval/:approvalId',
  'POST /api/agent/embed/guide',
  'GET /api/user/approvals',
  'GET /api/user/questions',
  // Assistants the person may pick, and their own.
  'GET /api/user/assistants',
  'POST /api/user/assistant',
  'GET /api/user/assistant/:id',
  'PUT /api/user/assistant/:id',
  'DELETE /api/user/assistant/:id',
  'POST /api/user/favoriteAssistants/:id',
  'DELETE /api/user/favoriteAssistants/:id',
  'POST /api/user/customModels',
  // History and feedback.
  'GET /api/user/history',
  'GET /api/user/history/:id',
  'DELETE /api/user/history/:id',
  'POST /api/user/history/:id/feedback',
  // Files vault and retrieval.
  'POST /api/user/files',
  'GET /api/user/files',
  'GET /api/user/files/:fileId',
  'GET /api/user/files/:fileId/download',
  'PUT /api/user/files/:fileId/content',
  'DELETE /api/user/files/:fileId',
  'POST /api/user/files/collections',
  'GET /api/user/files/collections',
  'GET /api/user/files/collections/:id/zip',
  'POST /api/user/rag/search',
  // Memory.
  'GET /api/user/memory',
  'POST /api/user/memory',
  'PATCH /api/user/memory/:id',
  'DELETE /api/user/memory/:id',
  // Settings.
  'GET /api/user/setting',
  'PUT /api/user/setting',
];

export const PASSWORD_CHANGE_ALLOW_LIST: readonly string[] = [
  'POST /api/user/me/password',
  'POST /api/auth/signout',
  'POST /api/user/refresh/profile',
];

const launchAllowed = new Set(LAUNCH_SCOPE_ALLOW_LIST);
const passwordAllowed = new Set(PASSWORD_CHANGE_ALLOW_LIST);

export function routeKey(request: Pick<FastifyRequest, 'method' | 'routeOptions'>): string {
  // HEAD is answered by the GET route.
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  return `${method} ${request.routeOptions.url ?? ''}`;
}

export function isLaunchScopeRoute(key: string): boolean {
  return launchAllowed.has(key);
}

export const LAUNCH_SCOPE_MESSAGE = 'Confirm with a code to continue: this session is limited to the twin it was opened for';

export const launchScopeCheck: ActorCheck = (request: FastifyRequest, actor: Actor) => {
  if (!actor.launchScope || launchAllowed.has(routeKey(request))) return;
  throw new ForbiddenError(LAUNCH_SCOPE_MESSAGE, 'LAUNCH_SCOPE_STEP_UP', { institutionId: actor.launchScope.twinId });
};

export const mustChangePasswordCheck: ActorCheck = (request: FastifyRequest, actor: Actor) => {
  if (!actor.mustChangePassword || passwordAllowed.has(routeKey(request))) return;
  throw new ForbiddenError('Change your password to continue', 'PASSWORD_CHANGE_REQUIRED');
};
