// A stored secret belongs to the endpoint it was entered for. A record moved to another origin (scheme,
// host or port) without a new secret loses the stored one, so that whoever may edit the record cannot
// send a secret someone else entered to a server of their choosing. Connectors, custom models and
// twins' sign-in providers apply this one rule.

/** What a save does to a record's stored secret. */
export type SecretChange = { set: string } | 'keep' | 'remove';

/**
 * The change a save makes to the stored secret once the URL's move is taken into account: `keep` becomes
 * `remove` when `newUrl` is given and is on another origin than `oldUrl`. A URL that does not parse
 * (or an empty one, meaning the deployment's own endpoint) is its own origin: only the same text is the same.
 */
export function secretAfterMove(oldUrl: string, newUrl: string | undefined, change: SecretChange): SecretChange {
  if (change !== 'keep' || newUrl === undefined) return change;
  return sameOrigin(oldUrl, newUrl) ? 'keep' : 'remove';
}

export function sameOrigin(a: string, b: string): boolean {
  const origin = (url: string) => (URL.canParse(url) ? new URL(url).origin : undefined);
  const [left, right] = [origin(a.trim()), origin(b.trim())];
  // An opaque origin ("null": file:, data:) is never the same as another.
  if (left === undefined || right === undefined || left === 'null' || right === 'null') return a.trim() === b.trim();
  return left === right;
}
