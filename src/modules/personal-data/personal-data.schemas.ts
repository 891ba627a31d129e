// Wire shapes of the personal-data routes (contract-additions.md, "Personal data").
import { z } from 'zod';
import { COUNT_KINDS } from './personal-data.repo.js';
import { DELETE_SCOPES } from './personal-scope.js';
import { EXPORT_STATUSES } from './personal-data.tables.js';

export const countsSchema = z.object({
  success: z.literal(true),
  counts: z.object(Object.fromEntries(COUNT_KINDS.map((kind) => [kind, z.number().int()])) as Record<(typeof COUNT_KINDS)[number], z.ZodNumber>),
});

export const exportStartedSchema = z.object({
  success: z.literal(true),
  exportId: z.string(),
  status: z.enum(EXPORT_STATUSES).describe('queued for a new export; a second request while one runs answers that one, with its status'),
});

export const exportStatusSchema = z.object({
  success: z.literal(true),
  exportId: z.string(),
  status: z.enum(EXPORT_STATUSES),
  progress: z.number().int().min(0).max(100).describe('percent of the archive written; 100 once ready'),
  created: z.string(),
  readyAt: z.string().nullable(),
  expiresAt: z.string().nullable().describe('the download link stops working at this moment (24 hours after readyAt)'),
  expired: z.boolean().describe('true once the link has expired (the archive is then deleted by the retention job)'),
});

export const downloadQuery = z.object({ token: z.string().min(1).max(200) });

export const deleteBody = z
  .object({
    scope: z.enum(DELETE_SCOPES),
    password: z.string().max(256).optional().describe("the account's password"),
    code: z.string().max(64).optional().describe('a current authenticator code, or an unused backup code'),
  });

export const deletedSchema = z.object({
  success: z.literal(true),
  deleted: z
    .object({
      history: z.number().int().optional(),
      voiceSessions: z.number().int().optional().describe('voice sessions (scopes history and all), removed at once'),
      files: z.number().int().optional(),
      collections: z.number().int().optional(),
      memory: z.number().int().optional(),
      assistants: z.number().int().optional(),
    })
    .describe('how many rows of each kind the scope deleted'),
});
