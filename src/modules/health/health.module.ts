// Wires the health family: /api/test. app.ts calls this once.
import type { App } from '../../platform/http/schemas.js';
import { healthRoutes, type HealthDeps } from './health.routes.js';

export function registerHealth(app: App, deps: HealthDeps): void {
  healthRoutes(app, deps);
}
