// Wires the connectors family: this process's MCP client pool (its requests through the platform's
// outbound guard), the catalog a turn uses (returned, and on the app as app.connectors), the admin
// routes of MCP servers and tools.
// app.ts calls this once, before the conversation engine that takes the catalog.
import { createMcpPool } from '../../ai/mcp/mcp-pool.js';
import type { ConnectorCatalog } from '../../ai/tools/connector-catalog.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { Outbound } from '../../platform/net/outbound.js';
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
  /** The platform's outbound guard (OUTBOUND_ALLOWED_HOSTS). */
  outbound: Outbound;
  /** Config `connectors`: CONNECTOR_CALL_TIMEOUT_MS. */
  settings: { callTimeoutMs: number };
}

export function registerConnectors(app: App, deps: ConnectorsDeps): ConnectorCatalog {
  const { policy, fetch } = deps.outbound;
  const pool = createMcpPool({ fetch, timeoutMs: deps.settings.callTimeoutMs });
  const catalog = createConnectorCatalog({ db: deps.db, secrets: deps.secrets, pool, changes: deps.changes });
  app.addHook('onClose', async () => catalog.close());
  app.decorate('connectors', catalog);
  connectorRoutes(app, createConnectorService({ db: deps.db, secrets: deps.secrets, policy, pool }));
  toolRoutes(app, createToolService({ db: deps.db, catalog }));
  return catalog;
}
