// /api/user/agents/connect/subscription: start, poll, status, disconnect of the current twin's chat
// subscription (device authorization grant, RFC 8628). Administrators of the current twin only.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failureSchema, failures, type App } from '../../platform/http/schemas.js';
import { subscriptionPollSchema, subscriptionStartSchema, subscriptionStatusSchema } from './subscription.schemas.js';
import type { SubscriptionService } from './subscription.service.js';

const TAGS = ['subscription'];
const BASE = '/api/user/agents/connect/subscription';
const WHO =
  "Only an administrator of the caller's current twin (or a super admin working in it): anyone else gets 403 NOT_TWIN_ADMIN and nothing changes. A caller without a current twin gets 404. Failures carry their code and the reason in message; the provider's detail goes to the log only. Tokens are stored encrypted and never returned.";
const noBody = z.unknown().optional();
/** A failure body whose description names the codes it carries at that status. */
const coded = (description: string) => failureSchema.describe(description);
const notAdmin = coded('NOT_TWIN_ADMIN: the caller is not an administrator of the current twin (nothing changed)');
const noTwin = coded('the caller has no current twin');

export function subscriptionRoutes(app: App, service: SubscriptionService): void {
  app.post(
    `${BASE}/start`,
    {
      schema: {
        tags: TAGS,
        summary: "Start connecting the twin's chat subscription",
        description: `Asks the provider for a device sign-in and answers the code to show: the administrator opens verificationUri (or verificationUriComplete), enters userCode and approves; then poll. One sign-in per twin: a new start replaces the pending one (a connection in place keeps serving until the new sign-in succeeds). 503 DEVICE_AUTH_DISABLED when the deployment has no subscription configured or the provider refuses device sign-in; 502 START_FAILED when the provider cannot be reached or fails. ${WHO}`,
        body: noBody,
        response: {
          200: subscriptionStartSchema,
          ...failures(401),
          403: notAdmin,
          404: noTwin,
          502: coded('START_FAILED: the provider could not be reached or failed'),
          503: coded('DEVICE_AUTH_DISABLED: no subscription configured, or the provider refuses device sign-in'),
        },
      },
    },
    async (request) => ({ success: true as const, ...(await service.start(actorOf(request))) }),
  );

  app.post(
    `${BASE}/poll`,
    {
      schema: {
        tags: TAGS,
        summary: 'Check the pending sign-in',
        description: `Asks the provider at most once per interval (whoever polls; a poll sooner answers pending without asking, and a slow_down from the provider adds 5 seconds). Answers connected: true, pending: false once the person approved. 400 NO_PENDING with no sign-in started; 410 EXPIRED once the code expired; 400 DEVICE_AUTH_FAILED when the person declined (both end the sign-in: start again); 502 POLL_FAILED when the provider or the service failed (the sign-in stays pending). ${WHO}`,
        body: noBody,
        response: {
          200: subscriptionPollSchema,
          400: coded('NO_PENDING: no sign-in in progress; DEVICE_AUTH_FAILED: the person declined'),
          ...failures(401),
          403: notAdmin,
          404: noTwin,
          410: coded('EXPIRED: the code expired; start again'),
          502: coded('POLL_FAILED: the provider or the service failed; the sign-in stays pending'),
        },
      },
    },
    async (request) => ({ success: true as const, ...(await service.poll(actorOf(request))) }),
  );

  app.get(
    `${BASE}/status`,
    {
      schema: {
        tags: TAGS,
        summary: "Whether the twin's subscription is connected",
        description: `connected is true while the twin has a usable connection: its access token is refreshed first when it is about to expire, and a refresh the provider refuses makes it false until connected again. 500 STATUS_FAILED when the connection cannot be read. ${WHO}`,
        response: { 200: subscriptionStatusSchema, ...failures(401), 403: notAdmin, 404: noTwin, 500: coded('STATUS_FAILED: the connection could not be read') },
      },
    },
    async (request) => ({ success: true as const, ...(await service.status(actorOf(request))) }),
  );

  app.post(
    `${BASE}/disconnect`,
    {
      schema: {
        tags: TAGS,
        summary: "Disconnect the twin's subscription",
        description: `Drops the pending sign-in and the tokens; the twin's assistants use the deployment's endpoint from their next turn on, on every process (a turn already streaming finishes). Then the provider is asked to revoke the tokens (best effort: a failure there is logged and changes nothing). Also 200 when nothing was connected. 500 DISCONNECT_FAILED when it cannot be done (nothing changed). ${WHO}`,
        body: noBody,
        response: {
          200: subscriptionStatusSchema.extend({ connected: z.literal(false) }).describe('Subscription disconnected'),
          ...failures(401),
          403: notAdmin,
          404: noTwin,
          500: coded('DISCONNECT_FAILED: the subscription could not be disconnected (nothing changed)'),
        },
      },
    },
    async (request) => ({ success: true as const, ...(await service.disconnect(actorOf(request))) }),
  );
}
