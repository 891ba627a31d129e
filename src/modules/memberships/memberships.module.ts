// Wires the memberships family: a person's own twins (list, switch, join, leave). app.ts calls this once.
import type { App } from '../../platform/http/schemas.js';
import { membershipRoutes } from './memberships.routes.js';
import { createMembershipsService, type MembershipsDeps } from './memberships.service.js';

export function registerMemberships(app: App, deps: MembershipsDeps): void {
  membershipRoutes(app, createMembershipsService(deps));
}
