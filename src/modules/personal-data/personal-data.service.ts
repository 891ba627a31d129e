// A person's own data: the counts, the export (a durable job; status; the mailed link's download)
// and the scoped soft delete, which needs the password or a current second-factor code on top of the
// session. Launch sessions never get here (their allow-list, modules/auth/launch-scope.ts, omits these
// routes); the download is reached by its link's token alone.
import type { Readable } from 'node:stream';
import { hashToken, safeEqual } from '../../platform/crypto/hash.js';
import { verifyPassword } from '../../platform/crypto/passwords.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { withTransaction, type Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError, BadRequestError, ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { hashBackupCode } from '../auth/codes.js';
import { claimTotpStep, consumeBackupCode } from '../auth/mfa.repo.js';
import { throttled, type Throttle } from '../auth/throttle.js';
import { matchTotp } from '../auth/totp.js';
import { findUserById } from '../users/users.repo.js';
import { EXPORT_JOB } from './export.job.js';
import { findActiveExport, findExport, insertExport, updateExport } from './exports.repo.js';
import {
  countPersonalData,
  softDeleteAssistants,
  softDeleteFiles,
  softDeleteHistory,
  softDeleteMemory,
  deleteVoiceSessions,
  type PersonalCounts,
} from './personal-data.repo.js';
import type { DeleteScope } from './personal-scope.js';
import type { DataExportRow, ExportStatus } from './personal-data.tables.js';

export const EXPORT_NOT_FOUND = 'Export not found';
export const REAUTH_MESSAGE = 'Confirm with your password or a current second-factor code';

export interface PersonalDataDeps {
  db: Database;
  jobs: JobQueue;
  storage: FileStorage;
  secrets: SecretBox;
  throttle: Throttle;
  now: () => Date;
  /** Ends live voice calls from any process (their records were just deleted). */
  endVoiceCalls: (sessionIds: string[]) => Promise<void>;
}

export interface ExportView {
  exportId: string;
  status: ExportStatus;
  progress: number;
  created: string;
  readyAt: string | null;
  expiresAt: string | null;
  expired: boolean;
}

export type DeletedCounts = Partial<Record<'history' | 'voiceSessions' | 'files' | 'collections' | 'memory' | 'assistants', number>>;

const isWrongSecret = (error: unknown) => error instanceof AppError && (error.code === 'INVALID_PASSWORD' || error.code === 'INVALID_CODE');

export function createPersonalDataService(deps: PersonalDataDeps) {
  const { db, now } = deps;

  function view(row: DataExportRow): ExportView {
    const expired = Boolean(row.purgedAt) || (row.expiresAt !== null && row.expiresAt.getTime() <= now().getTime());
    return {
      exportId: row.id,
      status: row.status,
      progress: row.progress,
      created: row.createdAt.toISOString(),
      readyAt: row.readyAt?.toISOString() ?? null,
      expiresAt: row.expiresAt?.toISOString() ?? null,
      expired,
    };
  }

  /** The password, or an authenticator or backup code: a session alone does not delete anything. */
  async function confirmIdentity(actor: Actor, input: { password?: string; code?: string }, ip: string): Promise<void> {
    if (!input.password && !input.code) throw new ForbiddenError(REAUTH_MESSAGE, 'REAUTHENTICATION_REQUIRED');
    const user = await findUserById(db, actor.userId);
    if (!user) throw new NotFoundError('User not found');
    await throttled(
      deps.throttle,
      { account: user.email, ip },
      async () => {
        if (input.password) {
          if (await verifyPassword(user.passwordHash, input.password)) return;
          throw new BadRequestError('Password is incorrect', 'INVALID_PASSWORD');
        }
        const code = (input.code ?? '').trim();
        if (user.totpSecretSealed) {
          // Real time, not the service clock: the authenticator app counts real time.
          const step = matchTotp(deps.secrets.decrypt(user.totpSecretSealed), code);
          if (step !== null && (await claimTotpStep(db, user.id, step))) return;
        }
        if (await consumeBackupCode(db, user.id, hashBackupCode(code))) return;
        throw new BadRequestError('Invalid code', 'INVALID_CODE');
      },
      isWrongSecret,
    );
  }

  return {
    counts(actor: Actor): Promise<PersonalCounts> {
      return countPersonalData(db, actor.userId, now());
    },

    /** One export at a time: while one is queued or running, asking again answers that one. */
    async startExport(actor: Actor): Promise<ExportView> {
      const created = await insertExport(db, actor.userId);
      if (!created) {
        const active = await findActiveExport(db, actor.userId);
        // It finished between the two statements: start the new one asked for.
        return active ? view(active) : this.startExport(actor);
      }
      try {
        await deps.jobs.send(EXPORT_JOB, { exportId: created.id });
      } catch (error) {
        await updateExport(db, created.id, { status: 'failed', error: 'The export could not be queued' });
        throw error;
      }
      return view(created);
    },

    async exportStatus(actor: Actor, id: string): Promise<ExportView> {
      const row = await findExport(db, id);
      if (!row || row.userId !== actor.userId) throw new NotFoundError(EXPORT_NOT_FOUND, 'EXPORT_NOT_FOUND');
      return view(row);
    },

    /** The link's token decides: a wrong one, or one for another export, reads as no such export. */
    async download(id: string, token: string): Promise<{ stream: Readable; size: number | null; created: Date }> {
      const row = await findExport(db, id);
      if (!row || !row.tokenHash || !safeEqual(row.tokenHash, hashToken(token))) throw new NotFoundError(EXPORT_NOT_FOUND, 'EXPORT_NOT_FOUND');
      const current = view(row);
      if (current.expired || !row.storageKey) throw new AppError(410, 'This download link has expired; ask for a new export', 'EXPORT_EXPIRED');
      if (row.status !== 'ready') throw new NotFoundError(EXPORT_NOT_FOUND, 'EXPORT_NOT_FOUND');
      return { stream: deps.storage.get(row.storageKey), size: row.size, created: row.createdAt };
    },

    async remove(actor: Actor, input: { scope: DeleteScope; password?: string; code?: string }, ip: string): Promise<DeletedCounts> {
      await confirmIdentity(actor, input, ip);
      const at = now();
      const scope = input.scope;
      const liveCalls: string[] = [];
      const removed = await withTransaction(db, async (tx) => {
        const deleted: DeletedCounts = {};
        if (scope === 'history' || scope === 'all') {
          deleted.history = await softDeleteHistory(tx, actor.userId, at);
          const sessions = await deleteVoiceSessions(tx, actor.userId);
          deleted.voiceSessions = sessions.count;
          liveCalls.push(...sessions.live);
        }
        if (scope === 'files' || scope === 'all') Object.assign(deleted, await softDeleteFiles(tx, actor.userId, at));
        if (scope === 'memory' || scope === 'all') deleted.memory = await softDeleteMemory(tx, actor.userId, at);
        if (scope === 'assistants' || scope === 'all') deleted.assistants = await softDeleteAssistants(tx, actor.userId, at);
        return deleted;
      });
      // A call still talking would go on recording into new records: it ends now, as the end route ends it.
      if (liveCalls.length > 0) await deps.endVoiceCalls(liveCalls);
      return removed;
    },
  };
}

export type PersonalDataService = ReturnType<typeof createPersonalDataService>;
