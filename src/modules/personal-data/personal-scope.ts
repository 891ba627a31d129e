// What "the caller's own data" is, in one place, for the counts, the export and the delete alike:
// rows the person wrote for themselves in any twin, never the twin's shared rows (shared memory,
// files shared as the twin's knowledge), another person's rows, or assistants a twin owns.
import { and, eq, gt, isNull, ne, type SQL } from 'drizzle-orm';
import { assistants } from '../assistants/assistants.tables.js';
import { sessions } from '../auth/sessions.tables.js';
import { fileCollections, files } from '../files/files.tables.js';
import { history, historyFeedback } from '../history/history.tables.js';
import { memoryParameters } from '../memory/memory.tables.js';
import { rtSessions } from '../realtime-voice/rt-sessions.tables.js';

export const ownHistory = (userId: string): SQL => and(eq(history.userId, userId), isNull(history.deletedAt))!;

/** Personal files: uploaded by the person and not shared as the twin's knowledge. */
export const ownFiles = (userId: string): SQL => and(eq(files.userId, userId), eq(files.shared, false), isNull(files.deletedAt))!;

export const ownCollections = (userId: string): SQL => and(eq(fileCollections.userId, userId), isNull(fileCollections.deletedAt))!;

/** Personal memory rows (shared rows are the twin's, whoever wrote them). */
export const ownMemory = (userId: string): SQL =>
  and(eq(memoryParameters.userId, userId), eq(memoryParameters.shared, false), isNull(memoryParameters.deletedAt))!;

/** Personal assistants: owned by the person and by no twin (never a system one). */
export const ownAssistants = (userId: string): SQL =>
  and(
    eq(assistants.userId, userId),
    isNull(assistants.twinId),
    isNull(assistants.systemKey),
    ne(assistants.status, 'deleted'),
    isNull(assistants.deletedAt),
  )!;

export const ownFeedback = (userId: string): SQL => eq(historyFeedback.userId, userId);

/** Voice sessions the person opened: each row holds the person as the session saw them (email, role). */
export const ownVoiceSessions = (userId: string): SQL => eq(rtSessions.userId, userId);

export const liveSessions = (userId: string, now: Date): SQL =>
  and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now))!;

/** The delete scopes of POST /api/user/data/delete and the kinds each one removes. */
export const DELETE_SCOPES = ['history', 'files', 'memory', 'assistants', 'all'] as const;
export type DeleteScope = (typeof DELETE_SCOPES)[number];
