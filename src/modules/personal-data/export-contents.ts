// What a personal-data archive holds, entry by entry: README.txt, one JSON file per kind in the API's
// own wire shapes (each family's presenter), and the original uploaded files under files/. Entries
// are produced lazily, history a page at a time, so the export's memory does not grow with the data.
import type { Executor } from '../../platform/db/client.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { presentSession } from '../admin-sessions/admin-sessions.schemas.js';
import { presentAssistant } from '../assistants/assistants.presenter.js';
import { presentCollection, presentFile } from '../files/files.presenter.js';
import { safeDisplayName } from '../files/detect.js';
import { presentFeedback, presentHistoryDetail } from '../history/history.presenter.js';
import { presentMemory } from '../memory/memory.presenter.js';
import { jsonArray, uniqueNames, type ArchiveEntry } from '../../platform/storage/zip-stream.js';
import {
  historyPage,
  personalAssistants,
  personalCollections,
  personalConversations,
  personalFeedback,
  personalFiles,
  personalMemory,
  personalSessions,
  personalVoiceSessions,
  personOf,
  type PersonalCounts,
} from './personal-data.repo.js';

export const HISTORY_PAGE = 200;

export const README = `Your personal data

This archive holds what the service keeps about you personally, in the shapes its API uses.
It does not hold a Digital Twin's shared data (shared memory, files shared as a twin's knowledge,
assistants a twin owns) or anything of other people.

account.json        your account: name, email, preferences, favorite assistants (ids)
conversations.json  your conversations that still hold a record (id, twin, title, dates, records)
history.json        every question and answer you asked, with its working detail and your rating
files.json          the files you uploaded (their records; the files themselves are under files/)
collections.json    your file collections
memory.json         your personal memory parameters
assistants.json     your personal assistants
favorites.json      the ids of your favorite assistants
feedback.json       your ratings of answers (history: the record rated)
sessions.json       your signed-in sessions that are still open
voice-sessions.json your voice sessions (twin, assistant, voice, when, how each ended, and you as
                    the session saw you); what was said in them is in history.json
files/              the original files you uploaded, as you uploaded them
`;

export interface ExportProgress {
  /** Called after each unit of work (a page of history, a file) with how many units are done. */
  (done: number): Promise<void>;
}

/** How many units of work the archive is: one per history page, one per file, one per other kind. */
export function workUnits(counts: PersonalCounts): number {
  return Math.ceil(counts.history / HISTORY_PAGE) + counts.files + 10;
}

export function archiveEntries(db: Executor, storage: FileStorage, userId: string, now: Date, progress: ExportProgress): AsyncIterable<ArchiveEntry> {
  let done = 0;
  const step = async () => {
    done += 1;
    await progress(done);
  };
  const json = (name: string, load: () => Promise<unknown>): ArchiveEntry => ({
    name,
    async *body() {
      const value = await load();
      await step();
      yield `${JSON.stringify(value, null, 2)}\n`;
    },
  });

  async function* historyPages(): AsyncGenerator<unknown[]> {
    let afterId: string | null = null;
    for (;;) {
      const page = await historyPage(db, userId, afterId, HISTORY_PAGE);
      if (page.length === 0) return;
      afterId = page[page.length - 1].row.id;
      yield page.map(({ row, feedback }) => presentHistoryDetail(row, feedback));
      await step();
      if (page.length < HISTORY_PAGE) return;
    }
  }

  return (async function* entries(): AsyncGenerator<ArchiveEntry> {
    yield { name: 'README.txt', body: async function* () { yield README; } };
    yield json('account.json', async () => {
      const person = await personOf(db, userId);
      if (!person) return null;
      return {
        _id: person.id,
        email: person.email,
        fname: person.fname,
        lname: person.lname,
        created: person.createdAt.toISOString(),
        favoriteAssistants: person.favoriteAssistants,
        userMemoryEnabled: person.userMemoryEnabled,
        remember_history_count: person.rememberHistoryCount,
      };
    });
    yield json('conversations.json', async () =>
      (await personalConversations(db, userId)).map((row) => ({
        _id: row.id,
        institution: row.twinId,
        assistant: row.assistantId,
        title: row.title,
        records: Number(row.records),
        created: row.createdAt.toISOString(),
        lastActivity: row.lastActivityAt.toISOString(),
      })),
    );
    yield { name: 'history.json', body: () => jsonArray(historyPages()) };
    const files = await personalFiles(db, userId);
    yield json('files.json', async () => files.map(presentFile));
    yield json('collections.json', async () => (await personalCollections(db, userId)).map((row) => presentCollection(row, userId)));
    yield json('memory.json', async () => (await personalMemory(db, userId)).map((row) => presentMemory(row, { isAuthor: true, editable: true })));
    yield json('assistants.json', async () => (await personalAssistants(db, userId)).map((row) => presentAssistant(row, { canEdit: true })));
    yield json('favorites.json', async () => (await personOf(db, userId))?.favoriteAssistants ?? []);
    yield json('feedback.json', async () => (await personalFeedback(db, userId)).map((row) => ({ history: row.historyId, ...presentFeedback(row) })));
    yield json('sessions.json', async () => {
      const person = await personOf(db, userId);
      const user = { id: userId, email: person?.email ?? '', fname: person?.fname ?? '', lname: person?.lname ?? '' };
      return (await personalSessions(db, userId, now)).map((session) => presentSession({ session, user }));
    });
    yield json('voice-sessions.json', async () =>
      (await personalVoiceSessions(db, userId)).map((row) => ({
        _id: row.id,
        institution: row.twinId,
        assistant: row.assistantId,
        conversation: row.conversationId,
        voice: row.voice,
        model: row.model,
        status: row.status,
        endReason: row.endReason,
        caller: { email: row.caller.email, accountType: row.caller.accountType, role: row.caller.role, permissions: row.caller.permissions },
        created: row.createdAt.toISOString(),
        ended: row.endedAt?.toISOString() ?? null,
      })),
    );
    const names = uniqueNames(files.map((file) => `files/${safeDisplayName(file.originalname)}`));
    for (const [index, file] of files.entries()) {
      // A record whose stored file is gone (removed by hand) is listed in files.json, not archived.
      if (!(await storage.exists(file.storageKey))) {
        await step();
        continue;
      }
      yield {
        name: names[index],
        stored: true,
        async *body() {
          for await (const chunk of storage.get(file.storageKey)) yield chunk as Uint8Array;
          await step();
        },
      };
    }
  })();
}
