// Wires the suggested questions family (admin and the people's list). app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { questionRoutes } from './questions.routes.js';
import { createQuestionsService } from './questions.service.js';

export function registerQuestions(app: App, deps: { db: Database }): void {
  questionRoutes(app, createQuestionsService(deps.db));
}
