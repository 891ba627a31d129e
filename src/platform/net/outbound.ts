// The one outbound guard of the process: the policy (platform/net/outbound-guard.ts) and the guarded
// fetch made from it once, from OUTBOUND_ALLOWED_HOSTS. Every request to a URL an administrator set
// (connectors, custom models, twins' sign-in providers) goes through `fetch`, or is checked by `policy`
// and connected to the checked address (the lean chat stream). URLs of the deployment's own
// configuration are trusted and do not come here.
import { createGuardedFetch, type GuardedFetch } from './guarded-fetch.js';
import { createOutboundPolicy, type OutboundPolicy, type Resolve } from './outbound-guard.js';

export interface Outbound {
  policy: OutboundPolicy;
  fetch: GuardedFetch;
}

export function createOutbound(options: { allowedHosts: readonly string[]; resolve?: Resolve }): Outbound {
  const policy = createOutboundPolicy(options);
  return { policy, fetch: createGuardedFetch(policy) };
}
