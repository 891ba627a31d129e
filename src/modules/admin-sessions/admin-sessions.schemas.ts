// Wire shape of a session in the administrators' list.
import { z } from 'zod';
import type { SessionListRow } from './admin-sessions.repo.js';

export const adminSessionSchema = z.object({
  _id: z.string(),
  user: z.object({ _id: z.string(), email: z.string(), fname: z.string(), lname: z.string() }),
  institution: z.string().nullable(),
  kind: z.enum(['full', 'launch', 'visitor']).describe('launch: restricted to this twin until the person confirms with a code; visitor: an embedded page\'s visitor (no account)'),
  ip: z.string(),
  userAgent: z.string(),
  created: z.string(),
  expires: z.string(),
});

export type AdminSessionWire = z.infer<typeof adminSessionSchema>;

export function presentSession({ session, user }: SessionListRow): AdminSessionWire {
  return {
    _id: session.id,
    user: { _id: user.id, email: user.email, fname: user.fname, lname: user.lname },
    institution: session.twinId,
    kind: session.kind,
    ip: session.ip,
    userAgent: session.userAgent,
    created: session.createdAt.toISOString(),
    expires: session.expiresAt.toISOString(),
  };
}
