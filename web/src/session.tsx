// Who is signed in: the token (kept in localStorage so a reload stays signed in) and the profile.
// A 401 on any call, or signing out, ends the session everywhere in the page.
import { useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, onSessionEnded, tokenStore, unwrap } from './api/client';
import type { Profile } from './api/types';

interface Session {
  token: string | null;
  profile: Profile | null;
  /** True while a stored token is being checked at start. */
  restoring: boolean;
  signedIn(token: string, profile: Profile): void;
  setProfile(profile: Profile): void;
  refreshProfile(): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [token, setToken] = useState<string | null>(() => tokenStore.get());
  const [profile, setProfile] = useState<Profile | null>(null);
  const [restoring, setRestoring] = useState<boolean>(() => tokenStore.get() !== null);

  const end = useCallback(() => {
    tokenStore.clear();
    setToken(null);
    setProfile(null);
    queryClient.clear();
  }, [queryClient]);

  const refreshProfile = useCallback(async () => {
    const answer = await unwrap(api.POST('/api/user/refresh/profile', { body: {} }));
    setProfile(answer.profile);
  }, []);

  useEffect(() => onSessionEnded(end), [end]);
  useEffect(() => {
    if (!restoring) return;
    refreshProfile()
      .catch(() => end())
      .finally(() => setRestoring(false));
  }, [restoring, refreshProfile, end]);

  const value = useMemo<Session>(
    () => ({
      token,
      profile,
      restoring,
      signedIn(newToken, newProfile) {
        tokenStore.set(newToken);
        queryClient.clear();
        setToken(newToken);
        setProfile(newProfile);
      },
      setProfile,
      refreshProfile,
      async signOut() {
        await api.POST('/api/auth/signout').catch(() => undefined);
        end();
      },
    }),
    [token, profile, restoring, queryClient, refreshProfile, end],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The signed-in profile (only under the signed-in layout). */
export function useProfile(): Profile {
  const { profile } = useSession();
  if (!profile) throw new Error('useProfile without a profile');
  return profile;
}
