// Wire shapes of a twin's LTI 1.3 platforms. A platform holds no secret: the launch is checked with the
// platform's public keys (its JWKS).
import { z } from 'zod';
import { objectId, paginationQuery } from '../../platform/http/schemas.js';
import { isAcceptableIssuer } from '../oauth/oauth.providers.js';
import type { LtiPlatformRow } from './lti.tables.js';

export const ltiPlatformSchema = z.object({
  _id: z.string(),
  institution: z.string().describe('the twin whose courses (ltiContextIds) the platform opens'),
  issuer: z.string(),
  clientId: z.string(),
  authLoginUrl: z.string(),
  jwksUrl: z.string(),
  deploymentIds: z.array(z.string()),
  toolLoginUrl: z.string().describe("the tool's login initiation URL to give the platform"),
  toolLaunchUrl: z.string().describe("the tool's launch (redirect) URL to give the platform"),
  created: z.string(),
  updated: z.string(),
});
export type LtiPlatformWire = z.infer<typeof ltiPlatformSchema>;

const platformUrl = (what: string) => z.url().max(2000).refine(isAcceptableIssuer, `${what} must be an https URL (http only on loopback)`);
const deploymentIds = z
  .array(z.string().trim().min(1).max(255))
  .max(100)
  .describe('the deployment ids the platform may launch with; empty: every launch answers LTI_UNKNOWN_DEPLOYMENT');

export const createLtiPlatformBody = z.object({
  issuer: platformUrl('the issuer').describe("the platform's issuer (`iss`), as the platform writes it"),
  clientId: z.string().trim().min(1).max(500).describe("the tool's client id at the platform (the id_token's `aud`)"),
  authLoginUrl: platformUrl('authLoginUrl').describe("the platform's OIDC authorization endpoint"),
  jwksUrl: platformUrl('jwksUrl').describe("the platform's public keys (JWKS)"),
  deploymentIds,
  institution: objectId.optional().describe("the twin (the caller's current twin when absent)"),
});
export const editLtiPlatformBody = createLtiPlatformBody.omit({ institution: true }).partial();
export type LtiPlatformInput = z.infer<typeof editLtiPlatformBody>;

export const listLtiPlatformsQuery = paginationQuery.omit({ search: true }).extend({
  institutionId: objectId.optional().describe('one twin of the scope; absent: every twin where the caller holds sso.edit'),
});

export const ltiPlatformResult = z.object({ success: z.literal(true), data: ltiPlatformSchema });
export const ltiPlatformList = z.object({ success: z.literal(true), data: z.array(ltiPlatformSchema), page: z.number(), limit: z.number(), total: z.number() });

export function presentLtiPlatform(row: LtiPlatformRow, publicUrl: string): LtiPlatformWire {
  return {
    _id: row.id,
    institution: row.twinId,
    issuer: row.issuer,
    clientId: row.clientId,
    authLoginUrl: row.authLoginUrl,
    jwksUrl: row.jwksUrl,
    deploymentIds: row.deploymentIds,
    toolLoginUrl: `${publicUrl}/api/lti/login`,
    toolLaunchUrl: `${publicUrl}/api/lti/launch`,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}
