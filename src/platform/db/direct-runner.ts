// How a database's statements reach its driver without drizzle: client.ts registers a runner for each
// handle it opens, and prepared.ts's runShaped looks it up by the handle's drizzle database. On its own so
// that neither of those two modules imports the other.

/** Runs a statement's text with its parameters on the driver; its rows as arrays, values as the driver reads them. */
export type DirectRunner = (name: string, text: string, params: unknown[]) => Promise<unknown[][]>;

const runners = new WeakMap<object, DirectRunner>();

/** How statements of `db` (a drizzle database) reach its driver. */
export function registerDirectRunner(db: object, runner: DirectRunner): void {
  runners.set(db, runner);
}

/** The runner registered for `db`, if any (a transaction, or a database opened elsewhere, has none). */
export function directRunnerOf(db: object): DirectRunner | undefined {
  return runners.get(db);
}
