// Schema pieces every route family uses: ids in paths, the failure body, success envelopes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { OBJECT_ID_PATTERN } from '../ids/ids.js';

/** The Fastify instance every module registers its routes on. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, ZodTypeProvider>;

export const objectId = z.string().regex(OBJECT_ID_PATTERN, 'must be 24 hexadecimal characters');
export const idParams = z.object({ id: objectId });

export const failureSchema = z
  .object({
    success: z.literal(false),
    message: z.string(),
    code: z.string().optional(),
    error: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  })
  .passthrough()
  .describe('Failure body');

/** Failure bodies for the listed statuses, for a route's response schema and the OpenAPI document. */
export function failures<const S extends number>(...statuses: S[]): Record<S, typeof failureSchema> {
  return Object.fromEntries(statuses.map((status) => [status, failureSchema])) as Record<S, typeof failureSchema>;
}

export const messageSchema = z.object({ success: z.literal(true), message: z.string() });

/** What a bulk route answers: how many rows it changed (ids it may not touch are skipped, not counted). */
export const changedSchema = z.object({ success: z.literal(true), changed: z.number().int() });

/** The body of a bulk delete: the ids to act on, at most `max`. */
export const idsBody = (max = 500) => z.object({ ids: z.array(objectId).min(1).max(max) });

/** The body of a bulk status route (people, twins): one action for the listed ids. */
export const bulkActionBody = z.object({
  action: z.enum(['activate', 'deactivate', 'delete']),
  ids: z.array(objectId).min(1).max(1000),
});

export const paginationQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  search: z.string().trim().max(200).optional(),
});

/**
 * A list query's twin filter as the spec spells it (`institutionId`), under the code's word (`twinId`).
 * Services type the filter as optional, so a query passed through unmapped would silently drop it.
 */
export function twinFilter<Q extends { institutionId?: string }>(query: Q): Omit<Q, 'institutionId'> & { twinId?: string } {
  const { institutionId, ...rest } = query;
  return { ...rest, twinId: institutionId };
}
