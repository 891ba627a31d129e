// Wires the connectors family: the outbound guard and this process's MCP client pool, the catalog a
// turn uses (returned, and on the app as app.connectors), the admin routes of MCP servers and tools.
// app.ts calls this once, before the conversation engine that takes the catalog.
import { createMcpPool } from '../../ai/mcp/mcp-pool.js';
import type { ConnectorCatalog } from '../../ai/tools/connector-catalog.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { createGuardedFetch } from '../../platform/net/guarded-fetch.js';
import { createOutboundPolicy } from '../../platform/net/outbound-guard.js';
import { createConnectorCatalog } from './connector-catalog.js';
import { connectorRoutes } from './connectors.routes.js';
import { createConnectorService } from './connectors.service.js';
import { toolRoutes } from './tools.routes.js';
import { createToolService } from './tools.service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The connectors' tools a turn may offer, and calls of them (modules/connectors). */
    connectors: ConnectorCatalog;
  }
}

export interface ConnectorsDeps {
  db: Database;
  secrets: SecretBox;
  changes: ChangeFeed;
  /** Config `connectors`: CONNECTOR_ALLOWED_HOSTS and CONNECTOR_CALL_TIMEOUT_MS. */
  settings: { allowedHosts: string[]; callTimeoutMs: number };
}

export function registerConnectors(app: App, deps: ConnectorsDeps): ConnectorCatalog {
  const policy = createOutboundPolicy({ allowedHosts: deps.settings.allowedHosts });
  const guardedFetch = createGuardedFetch(policy);
  const pool = createMcpPool({ fetch: guardedFetch, timeoutMs: deps.settings.callTimeoutMs });
  const catalog = createConnectorCatalog({ db: deps.db, secrets: deps.secrets, pool, changes: deps.changes });
  app.addHook('onClose', async () => {
    await catalog.close();
    guardedFetch.close();
  });
  app.decorate('connectors', catalog);
  connectorRoutes(app, createConnectorService({ db: deps.db, secrets: deps.secrets, policy, pool }));
  toolRoutes(app, createToolService({ db: deps.db, catalog }));
  return catalog;
}
