// Wires the admin users family: accounts (list, read, create or enrol, edit, bulk, import) and
// memberships of a twin. app.ts calls this once.
import type { App } from '../../platform/http/schemas.js';
import { adminMembershipRoutes } from './admin-memberships.routes.js';
import { createAdminMembershipsService } from './admin-memberships.service.js';
import { createEnrolService } from './admin-users.import.js';
import { adminUserRoutes } from './admin-users.routes.js';
import { createAdminUsersService, type AdminUsersDeps } from './admin-users.service.js';

export function registerAdminUsers(app: App, deps: AdminUsersDeps): void {
  const users = createAdminUsersService(deps);
  adminUserRoutes(app, users, createEnrolService(deps, users));
  adminMembershipRoutes(app, createAdminMembershipsService(deps));
}
