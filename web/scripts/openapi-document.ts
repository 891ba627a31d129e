// Writes the service's OpenAPI document (what it serves at /api/docs/json) to the path given, by
// building the app in-process on an embedded database in a throw-away folder: the client's types are generated from it at
// build time, so a renamed field breaks the client's build, not the person using it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { closePlatform, openPlatform } from '../../src/platform/platform.js';

interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; schema: unknown }> }>>;
}

/**
 * A query string declared as a record (z.record) reaches the document as one parameter per keyword of
 * its JSON schema (`type: "object"`, `propertyNames`, ...), which the type generator refuses. The
 * client never sends those routes a typed query (they are the browser's redirects), so such parameters
 * are left out here, with a line saying which.
 */
function dropMalformedParameters(document: OpenApiDocument): void {
  for (const [route, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const keywords = new Set(['type', 'propertyNames', 'additionalProperties']);
      const bad = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query' && keywords.has(parameter.name));
      if (bad.length === 0) continue;
      operation.parameters = operation.parameters!.filter((parameter) => !bad.includes(parameter));
      console.warn(`openapi: ${method.toUpperCase()} ${route}: a record query string left out of the client's types`);
    }
  }
}

const target = process.argv[2];
if (!target) {
  console.error('usage: openapi-document.ts <output.json>');
  process.exit(1);
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-openapi-'));
try {
  const config = loadConfig({
    DATA_DIR: dataDir,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
  });
  // The process's own platform, embedded, in a throw-away data folder: the app is built as main.ts builds it.
  const platform = await openPlatform(config, { info: () => undefined, error: (object: unknown) => console.error(object) });
  const app = await buildApp({ ...platform, logger: false });
  await app.ready();
  const response = await app.inject({ method: 'GET', url: '/api/docs/json' });
  if (response.statusCode !== 200) throw new Error(`/api/docs/json answered ${response.statusCode}`);
  const document = JSON.parse(response.body) as OpenApiDocument;
  dropMalformedParameters(document);
  mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
  writeFileSync(target, JSON.stringify(document, null, 2));
  await app.close();
  await closePlatform(platform);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
