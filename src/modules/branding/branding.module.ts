// Wires the branding family: the public branding record of a twin. app.ts calls this once.
import type { App } from '../../platform/http/schemas.js';
import { brandingRoutes } from './branding.routes.js';
import { createBrandingService, type BrandingDeps } from './branding.service.js';

export function registerBranding(app: App, deps: BrandingDeps): void {
  brandingRoutes(app, createBrandingService(deps));
}
