// The one twin lookup third-party sign-in needs that the institutions module does not offer yet.
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { institutions, type InstitutionRow } from '../institutions/institutions.tables.js';

export async function findInstitutionByPublicId(db: Executor, publicId: string): Promise<InstitutionRow | undefined> {
  const [row] = await db
    .select()
    .from(institutions)
    .where(and(eq(institutions.publicId, publicId), isNull(institutions.deletedAt)))
    .limit(1);
  return row;
}
