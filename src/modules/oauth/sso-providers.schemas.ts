// Wire shapes of a twin's SSO providers. The client secret is never shown: only whether one is set.
import { z } from 'zod';
import type { SsoProviderRow } from './oauth.tables.js';
import { isAcceptableIssuer } from './oauth.providers.js';

export const ssoProviderSchema = z.object({
  _id: z.string(),
  institution: z.string(),
  name: z.string(),
  issuer: z.string(),
  clientId: z.string(),
  hasClientSecret: z.boolean(),
  created: z.string(),
  updated: z.string(),
});

const issuer = z.url().refine(isAcceptableIssuer, 'must be an https URL (http only on loopback)');

export const ssoProviderCreateBody = z.object({
  name: z.string().trim().min(1).max(100),
  issuer,
  clientId: z.string().trim().min(1).max(500),
  clientSecret: z.string().max(2000).optional().describe('sealed at rest, never returned; omit for a public client'),
});

export const ssoProviderUpdateBody = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  issuer: issuer.optional(),
  clientId: z.string().trim().min(1).max(500).optional(),
  clientSecret: z.string().max(2000).optional().describe('empty or absent keeps the stored secret'),
});

export type SsoProviderWire = z.infer<typeof ssoProviderSchema>;

export function presentSsoProvider(row: SsoProviderRow): SsoProviderWire {
  return {
    _id: row.id,
    institution: row.twinId,
    name: row.name,
    issuer: row.issuer,
    clientId: row.clientId,
    hasClientSecret: Boolean(row.clientSecretSealed),
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}
