// This tab's Socket.IO link, opened once per session and twin, shared by the chat and the approval
// cards; null until opened (and the chat then asks over SSE).
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { useSession } from '../session';
import { createSocketLink, type LiveSocket } from './transports';

const LiveContext = createContext<LiveSocket | null>(null);

export function LiveProvider({ children }: { children: ReactNode }) {
  const { token, profile } = useSession();
  const [link, setLink] = useState<LiveSocket | null>(null);
  const userId = profile?._id;
  const institutionId = profile?.institution?._id ?? '';
  useEffect(() => {
    if (!token || !profile || !userId) return;
    const created = createSocketLink(token, {
      userId,
      email: profile.email,
      profileName: [profile.fname, profile.lname].filter(Boolean).join(' '),
      institutionId,
      institutionName: profile.institution?.name ?? '',
    });
    setLink(created);
    return () => {
      created.close();
      setLink(null);
    };
    // The link follows the session and the twin, not every profile change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [token, userId, institutionId]);
  return <LiveContext.Provider value={link}>{children}</LiveContext.Provider>;
}

export function useLiveSocket(): LiveSocket | null {
  return useContext(LiveContext);
}
