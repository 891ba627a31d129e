// The OpenAPI document, built from the route schemas: a readable reference at /api/docs and the
// JSON at /api/docs/json. Routes of this scope are public (no token needed to read the reference).
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { addDocumentHeaders } from './security-headers.js';

export async function registerOpenApi(app: FastifyInstance, info: { version: string; publicUrl: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Digital Twin Conversation Service',
        version: info.version,
        description:
          'REST and JSON service hosting AI conversation agents (Digital Twins). All routes sit under /api. ' +
          'Authenticate with the JWT from POST /api/auth/signin in the `x-access-token` header ' +
          '(`Authorization: Bearer` is also accepted). Failure bodies are {success: false, message, code?, error?}.',
      },
      servers: [{ url: info.publicUrl }],
      components: {
        securitySchemes: {
          accessToken: { type: 'apiKey', in: 'header', name: 'x-access-token' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
      security: [{ accessToken: [] }, { bearer: [] }],
    },
    transform: jsonSchemaTransform,
    // Schemas registered with an id (`.meta({ id })`, e.g. the assistant enums) become named components.
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(async (docs) => {
    // The reference is a page: it carries the document-only headers too.
    docs.addHook('onRequest', (_request, reply, done) => {
      addDocumentHeaders(reply);
      done();
    });
    docs.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), auth: 'none' };
    });
    await docs.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: true });
  });
}
