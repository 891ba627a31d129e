// Wires the approval routes on the gate the app built (the conversation engine asks the same gate,
// which the app also carries as `app.approvals`).
import type { App } from '../../platform/http/schemas.js';
import type { ApprovalGate } from './approval-gate.js';
import { approvalRoutes } from './approvals.routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The approval gate of connector calls (approval-gate.ts). */
    approvals: ApprovalGate;
  }
}

export function registerApprovals(app: App, deps: { gate: ApprovalGate }): void {
  app.decorate('approvals', deps.gate);
  approvalRoutes(app, deps.gate);
}
