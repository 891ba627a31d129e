// Wires the approval routes on the gate the app built (the conversation engine asks the same gate).
import type { App } from '../../platform/http/schemas.js';
import type { ApprovalGate } from './approval-gate.js';
import { approvalRoutes } from './approvals.routes.js';

export function registerApprovals(app: App, deps: { gate: ApprovalGate }): void {
  approvalRoutes(app, deps.gate);
}
