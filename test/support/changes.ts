// A test that writes rows directly (not through a route) and then asks the app something: the app's
// caches hear of the write through the database's notice, which a server delivers a moment later.
import type { App } from '../../src/platform/http/schemas.js';
import { until } from './until.js';

/** Waits until the app has heard every row change committed so far. */
export async function changesHeard(app: App): Promise<void> {
  app.changes.fence();
  await until(() => app.changes.caughtUp);
}
