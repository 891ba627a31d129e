// POST /api/ai/approval/{approvalId} and GET /api/user/approvals: a person decides on an approval card
// of their own turn, from any tab and any process; a tab opened later lists the cards still waiting.
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import type { ApprovalGate } from './approval-gate.js';
import { approvalParams, decisionAnswer, decisionBody, pendingAnswer } from './approvals.schemas.js';

export function approvalRoutes(app: App, gate: ApprovalGate): void {
  app.post(
    '/api/ai/approval/:approvalId',
    {
      schema: {
        tags: ['approvals'],
        summary: 'Decide on an approval card',
        description:
          'The first decision wins: the waiting call runs (approve, approve_conversation) or returns "declined by the user" to the model (deny), and every tab of the person ' +
          'receives TOOL_APPROVAL_DECIDED {approvalId, decision, decidedAt} (SSE frame approval_decided). approve_conversation also approves later calls of that tool of that ' +
          'server in the same conversation without a card. A card already decided, expired or cancelled answers 409 APPROVAL_DECIDED; a card that is not the caller\'s (or no card) 404 APPROVAL_NOT_FOUND.',
        params: approvalParams,
        body: decisionBody,
        response: { 200: decisionAnswer, ...failures(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const { decision } = await gate.decide(actorOf(request), request.params.approvalId, request.body.decision);
      return { success: true as const, decision };
    },
  );

  app.get(
    '/api/user/approvals',
    {
      schema: {
        tags: ['approvals'],
        summary: 'My approval cards still waiting',
        description:
          "The caller's cards of their current twin that wait for a decision, oldest first (a card decided, expired or cancelled is never listed). " +
          'The same card arrives live as Socket.IO TOOL_APPROVAL and SSE frame {type: "approval", ...}.',
        response: { 200: pendingAnswer, ...failures(401) },
      },
    },
    async (request) => ({ success: true as const, approvals: await gate.pending(actorOf(request)) }),
  );
}
