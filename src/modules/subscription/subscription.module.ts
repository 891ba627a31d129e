// Wires the subscription connection family and gives the conversation engine its model lookup
// (subscriptionModelFor: the subscription's API while a twin is connected). app.ts calls this once.
import type { SubscriptionConfig } from '../../config.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { createSubscriptionProvider } from './subscription.provider.js';
import { subscriptionRoutes } from './subscription.routes.js';
import { createSubscriptionService } from './subscription.service.js';
import { createTokenKeeper, subscriptionModelLookup, type SubscriptionEndpoint } from './subscription.tokens.js';

export interface SubscriptionModule {
  /** Null when the deployment has no subscription configured: turns then never look. */
  subscriptionModelFor: ((twinId: string) => Promise<SubscriptionEndpoint | null>) | null;
}

export function registerSubscription(app: App, deps: { db: Database; secrets: SecretBox; config?: SubscriptionConfig }): SubscriptionModule {
  const log = app.log.child({ module: 'subscription' });
  const provider = deps.config ? createSubscriptionProvider(deps.config) : undefined;
  const keeper = provider ? createTokenKeeper({ db: deps.db, secrets: deps.secrets, provider, log }) : undefined;
  subscriptionRoutes(app, createSubscriptionService({ db: deps.db, secrets: deps.secrets, provider, keeper, log }));
  return { subscriptionModelFor: keeper && deps.config ? subscriptionModelLookup(keeper, deps.config) : null };
}
