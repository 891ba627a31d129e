// The LTI 1.3 claims of a resource link launch, read from a verified id_token, and the profile's
// lxp_* fields made from them (docs/decisions.md, "LTI 1.3").
import type { JWTPayload } from 'jose';
import type { ExternalProfile } from '../users/users.tables.js';

const LTI = 'https://purl.imsglobal.org/spec/lti/claim/';

export interface LaunchClaims {
  subject: string;
  messageType: unknown;
  version: unknown;
  deploymentId: string | undefined;
  contextId: string | undefined;
  roles: string[];
  email: string | undefined;
  givenName: string;
  familyName: string;
  platform: { guid?: string; name?: string };
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);
const object = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

export function readLaunchClaims(payload: JWTPayload): LaunchClaims {
  const context = object(payload[`${LTI}context`]);
  const platform = object(payload[`${LTI}tool_platform`]);
  const roles = payload[`${LTI}roles`];
  return {
    subject: text(payload.sub) ?? '',
    messageType: payload[`${LTI}message_type`],
    version: payload[`${LTI}version`],
    deploymentId: text(payload[`${LTI}deployment_id`]),
    contextId: text(context.id),
    roles: Array.isArray(roles) ? roles.filter((role): role is string => typeof role === 'string') : [],
    email: text(payload.email)?.toLowerCase(),
    givenName: text(payload.given_name) ?? '',
    familyName: text(payload.family_name) ?? '',
    platform: { guid: text(platform.guid), name: text(platform.name) },
  };
}

/** Context roles, highest first, with the lxp_role_id each is given. */
const CONTEXT_ROLES: ReadonlyArray<[name: string, id: number]> = [
  ['Administrator', 7],
  ['Instructor', 2],
  ['TeachingAssistant', 3],
  ['ContentDeveloper', 4],
  ['Mentor', 5],
  ['Manager', 6],
  ['Learner', 1],
  ['Member', 8],
];

/** A role URI's short name: `…/membership#Instructor` → Instructor, `…/membership/Instructor#TeachingAssistant` → TeachingAssistant. */
const shortName = (role: string) => role.slice(role.lastIndexOf('#') + 1);
const isContextRole = (role: string) => role.includes('/membership') || !role.includes('/');

/** lxp_user_type: 3 administrator (system or institution), 2 teaching staff, 1 learner, 0 anything else. */
function userType(roles: string[]): number {
  const names = roles.map(shortName);
  if (roles.some((role) => !isContextRole(role) && /#(Administrator|SysAdmin)$/.test(role))) return 3;
  if (names.some((name) => ['Instructor', 'Faculty', 'Staff', 'TeachingAssistant', 'ContentDeveloper', 'Mentor'].includes(name))) return 2;
  if (names.some((name) => ['Learner', 'Student'].includes(name))) return 1;
  return 0;
}

export function lxpProfile(claims: LaunchClaims, issuer: string): ExternalProfile {
  const contextNames = claims.roles.filter(isContextRole).map(shortName);
  const role = CONTEXT_ROLES.find(([name]) => contextNames.includes(name));
  return {
    lxp_user_id: claims.subject,
    lxp_partner_id: claims.platform.guid ?? issuer,
    lxp_partner_name: claims.platform.name ?? (URL.canParse(issuer) ? new URL(issuer).host : issuer),
    lxp_role_name: role?.[0] ?? '',
    lxp_role_id: role?.[1] ?? 0,
    lxp_user_type: userType(claims.roles),
  };
}
