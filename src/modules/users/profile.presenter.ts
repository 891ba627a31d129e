// Shapes the sign-in profile field by field from the account, its current twin and its permissions.
import { presentTwin } from '../twins/twin-object.js';
import type { TwinRow } from '../twins/twins.tables.js';
import type { ProfileWire } from './profile.schemas.js';
import type { UserRow } from './users.tables.js';

const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);

export interface ProfileParts {
  user: UserRow;
  twin: TwinRow | null;
  permissions: readonly string[];
  /** Favorite assistants as records when populated, else their ids. */
  favoriteAssistants?: unknown[];
  /** The twin has a usable chat subscription connected. */
  subscriptionConnected?: boolean;
}

export function presentProfile({ user, twin, permissions, favoriteAssistants, subscriptionConnected = false }: ProfileParts): ProfileWire {
  const external = user.external;
  return {
    _id: user.id,
    email: user.email,
    fname: user.fname,
    lname: user.lname,
    picture: user.picture,
    accountType: user.accountType,
    permissions: [...permissions],
    customerId: external.customerId ?? '',
    lxp_user_id: external.lxp_user_id ?? '',
    lxp_partner_id: external.lxp_partner_id ?? '',
    lxp_partner_name: external.lxp_partner_name ?? '',
    lxp_role_name: external.lxp_role_name ?? '',
    lxp_user_type: external.lxp_user_type ?? 0,
    lxp_role_id: external.lxp_role_id ?? 0,
    credits: user.credits,
    creditsUsed: user.creditsUsed,
    plan: user.plan,
    status: user.status,
    trial_end: iso(user.trialEnd),
    current_period_end: iso(user.currentPeriodEnd),
    created: user.createdAt.toISOString(),
    trial_used: user.trialUsed,
    cancel_at_period_end: user.cancelAtPeriodEnd,
    use_location: user.useLocation,
    pin_ui: user.pinUi,
    dark_mode: user.darkMode,
    referralId: user.referralId,
    resetCodeId: user.resetCodeId,
    referrerPaid: user.referrerPaid,
    invoices_urls: user.invoicesUrls,
    remember_history_count: user.rememberHistoryCount,
    max_dialogues: user.maxDialogues,
    __v: user.version,
    browser_voice: user.browserVoice,
    rt_voice: user.rtVoice,
    mfaEnabled: user.mfaEnabled,
    mfaMethod: user.mfaMethod,
    mustChangePassword: user.mustChangePassword,
    userMemoryEnabled: user.userMemoryEnabled,
    favoriteAssistants: favoriteAssistants ?? user.favoriteAssistants,
    institution: twin ? { ...presentTwin(twin), subscriptionConnected } : null,
  };
}
