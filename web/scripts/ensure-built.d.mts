/** Builds web/dist when it is missing or older than its sources; true when it built. */
export function ensureBuilt(): boolean;
export function needsBuild(): boolean;
export function builtAt(): number;
