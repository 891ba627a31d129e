// Wires the memory family: a person's and their twin's memory parameters. app.ts calls this once
// (recall and long-term extraction reach the turn through conversations/context-providers.ts).
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { memoryRoutes } from './memory.routes.js';
import { createMemoryService } from './memory.service.js';

export function registerMemory(app: App, deps: { db: Database }): void {
  memoryRoutes(app, createMemoryService(deps.db));
}
