// A twin's LTI platforms, administered by holders of sso.edit in that twin (a twin administrator holds
// it, a super admin everywhere): a platform signs people in, like the twin's own SSO providers. Another
// twin's platform answers 404. Every URL passes the outbound guard when saved (the issuer too: it is
// never fetched, but a platform's identity may not name an internal host either).
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { refuseUnlessAllowed, type OutboundPolicy } from '../../platform/net/outbound-guard.js';
import { AccessContext, INSTITUTION_NOT_FOUND, requireAccess } from '../access/access.js';
import { isLiveTwin } from '../access/access.repo.js';
import { deletePlatform, findPlatform, findTwinRegistration, insertPlatform, listPlatforms, updatePlatform } from './lti.repo.js';
import { presentLtiPlatform, type LtiPlatformInput } from './lti-platforms.schemas.js';
import type { LtiPlatformRow } from './lti.tables.js';

export const LTI_PLATFORM_NOT_FOUND = 'LTI_PLATFORM_NOT_FOUND';

const fieldError = (message: string, code: string, field: string) => new BadRequestError(message, code, { field, issues: [{ field, message }] });
const notFound = () => new NotFoundError('LTI platform not found', LTI_PLATFORM_NOT_FOUND);
const registered = () => new ConflictError('This twin already registers this issuer and client id', 'LTI_PLATFORM_EXISTS');

export function createLtiPlatformsService({ db, policy, publicUrl }: { db: Database; policy: OutboundPolicy; publicUrl: string }) {
  const present = (row: LtiPlatformRow) => presentLtiPlatform(row, publicUrl);

  /** A twin named in a body (or the current one): unknown or not the caller's 404, the caller's without sso.edit 403. */
  async function requireTwin(actor: Actor, named: string | undefined): Promise<string> {
    const twinId = named ?? actor.twinId;
    if (!twinId) throw fieldError('Name the twin (institution): you are in none', 'INSTITUTION_REQUIRED', 'body.institution');
    const access = new AccessContext(db, actor);
    if (!(await isLiveTwin(db, twinId))) throw new NotFoundError(INSTITUTION_NOT_FOUND);
    if (await access.holds(twinId, 'sso.edit')) return twinId;
    if (await access.memberOf(twinId)) throw new ForbiddenError('Not authorized', 'FORBIDDEN');
    throw new NotFoundError(INSTITUTION_NOT_FOUND);
  }

  /** A platform the caller administers: anything else, another twin's included, 404. */
  async function owned(actor: Actor, id: string): Promise<LtiPlatformRow> {
    const row = await findPlatform(db, id);
    if (!row || !(await new AccessContext(db, actor).holds(row.twinId, 'sso.edit'))) throw notFound();
    return row;
  }

  async function checkUrls(input: LtiPlatformInput): Promise<void> {
    for (const url of [input.issuer, input.authLoginUrl, input.jwksUrl]) if (url !== undefined) await refuseUnlessAllowed(policy, url);
  }

  return {
    async list(actor: Actor, query: { page: number; limit: number; twinId?: string }) {
      const scope = await requireAccess(db, actor, 'twins.managed', { permission: 'sso.edit' });
      const twins = query.twinId ? (scope === 'all' || scope.includes(query.twinId) ? [query.twinId] : []) : scope;
      const { rows, total } = await listPlatforms(db, twins, { offset: (query.page - 1) * query.limit, limit: query.limit });
      return { success: true as const, data: rows.map(present), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string) {
      return present(await owned(actor, id));
    },

    async create(actor: Actor, input: Required<Omit<LtiPlatformInput, 'deploymentIds'>> & { deploymentIds: string[]; institution?: string }) {
      const twinId = await requireTwin(actor, input.institution);
      await checkUrls(input);
      if (await findTwinRegistration(db, twinId, input.issuer, input.clientId)) throw registered();
      const { institution: _twin, ...fields } = input;
      return present(await insertPlatform(db, { ...fields, deploymentIds: [...new Set(input.deploymentIds)], twinId, createdBy: actor.userId }));
    },

    async edit(actor: Actor, id: string, input: LtiPlatformInput) {
      const current = await owned(actor, id);
      await checkUrls(input);
      const issuer = input.issuer ?? current.issuer;
      const clientId = input.clientId ?? current.clientId;
      if (await findTwinRegistration(db, current.twinId, issuer, clientId, id)) throw registered();
      const deploymentIds = input.deploymentIds && [...new Set(input.deploymentIds)];
      return present((await updatePlatform(db, id, { ...input, deploymentIds })) ?? current);
    },

    async remove(actor: Actor, id: string): Promise<void> {
      await owned(actor, id);
      await deletePlatform(db, id);
    },
  };
}

export type LtiPlatformsService = ReturnType<typeof createLtiPlatformsService>;
