// POST /api/admin/user (create or add) and POST /api/admin/users/import (many people, JSON or CSV):
// both apply behaviour 2 through enrol(); the import reports an outcome per row and goes on past errors.
import { z } from 'zod';
import type { Actor } from '../../platform/http/actor.js';
import { AppError, BadRequestError } from '../../platform/http/errors.js';
import { PASSWORD_RULE } from '../../platform/crypto/passwords.js';
import { ACCOUNT_TYPES } from '../users/users.tables.js';
import { peopleFromCsv, type CsvPerson } from './csv.js';
import { authorizeEnrol, enrol } from './admin-users.enrol.js';
import { analyzeStaleTables } from '../../platform/db/maintenance.js';
import { IMPORT_MAX_ROWS, type CreateUserInput, type ImportOutcome } from './admin-users.schemas.js';
import type { AdminUsersDeps, AdminUsersService } from './admin-users.service.js';

const CREATE_KEYS = new Set(['email', 'fname', 'lname', 'password', 'accountType', 'institution', 'role', 'mustChangePassword']);

function targetTwin(actor: Actor, named: string | undefined): string {
  const twin = named ?? actor.twinId;
  if (!twin) throw new BadRequestError('Name the institution to add people to', 'INSTITUTION_REQUIRED');
  return twin;
}

export interface ImportRequest {
  users?: CsvPerson[];
  csv?: string;
  role?: 'user' | 'admin';
  accountType?: (typeof ACCOUNT_TYPES)[number];
  institution?: string;
}

const rowSchema = z.object({
  email: z.email().max(320),
  fname: z.string().max(200).optional(),
  lname: z.string().max(200).optional(),
  password: z.string().min(PASSWORD_RULE.min).max(PASSWORD_RULE.max).optional(),
  accountType: z.enum(ACCOUNT_TYPES).optional(),
  role: z.enum(['user', 'admin']).optional(),
});

export function createEnrolService(deps: AdminUsersDeps, users: AdminUsersService) {
  return {
    async create(actor: Actor, body: CreateUserInput) {
      const twinId = targetTwin(actor, body.institution);
      await authorizeEnrol(deps, actor, twinId);
      const otherKeys = Object.keys(body).filter((key) => !CREATE_KEYS.has(key));
      const result = await enrol(deps, actor, twinId, { ...body, otherKeys });
      return {
        created: result.outcome === 'created',
        body: { success: true as const, data: await users.present(deps.db, actor, result.user.id), ignoredFields: result.ignoredFields },
      };
    },

    async importUsers(actor: Actor, request: ImportRequest) {
      const twinId = targetTwin(actor, request.institution);
      await authorizeEnrol(deps, actor, twinId);
      let rows: CsvPerson[];
      let unknownColumns: string[] = [];
      if (request.csv !== undefined) ({ people: rows, unknownColumns } = peopleFromCsv(request.csv));
      else rows = request.users ?? [];
      if (rows.length > IMPORT_MAX_ROWS) throw new BadRequestError(`At most ${IMPORT_MAX_ROWS} people per import`, 'TOO_MANY_ROWS');

      const results: ImportOutcome[] = [];
      for (const [index, raw] of rows.entries()) {
        const email = raw.email ?? '';
        const parsed = rowSchema.safeParse({
          ...raw,
          accountType: raw.accountType ?? request.accountType,
          role: raw.role ?? request.role,
        });
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          results.push({ row: index + 1, email, outcome: 'error', message: `Invalid ${issue.path.join('.') || 'row'}: ${issue.message}` });
          continue;
        }
        try {
          const result = await enrol(deps, actor, twinId, { ...parsed.data, otherKeys: unknownColumns });
          results.push({ row: index + 1, email: result.user.email, outcome: result.outcome, userId: result.user.id, ignoredFields: result.ignoredFields });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          results.push({ row: index + 1, email, outcome: 'error', message: error.message });
        }
      }
      // Many new accounts at once can leave the embedded database's statistics (no autovacuum there) far
      // behind, and the people list would be planned as over a handful of rows until the minute's job:
      // brought up to date now. A failure only delays that to the job, which reports it.
      if (deps.database && results.length > 0) await analyzeStaleTables(deps.database).catch(() => undefined);
      const count = (outcome: ImportOutcome['outcome']) => results.filter((result) => result.outcome === outcome).length;
      return {
        success: true as const,
        total: results.length,
        created: count('created'),
        added: count('added'),
        updated: count('updated'),
        unchanged: count('unchanged'),
        failed: count('error'),
        results,
      };
    },
  };
}

export type EnrolService = ReturnType<typeof createEnrolService>;
