// Wire shape of a credit ledger row (the audit of every balance change).
import { z } from 'zod';

export const ledgerEntry = z.object({
  _id: z.string(),
  institution: z.string().nullable(),
  account: z.enum(['institution', 'user']),
  user: z.string().nullable(),
  delta: z.number(),
  balanceAfter: z.number(),
  reason: z.string(),
  actor: z.string().nullable(),
  created: z.string(),
});

export type LedgerEntryWire = z.infer<typeof ledgerEntry>;
