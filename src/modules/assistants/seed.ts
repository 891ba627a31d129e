// The system assistants (no owner, no twin) every deployment has from its first start, the standard
// "New Conversation" first: the fallback of every conversation (behaviour 1). Seeding is idempotent
// (keyed by systemKey) and runs at every start, so an operator's edits to them are kept. They answer from
// the person's files (ragEnabled): a person who uploads a file and asks about it expects it to be used
// (a turn searches only when the person has a file to search; docs/decisions.md, "First steps").
import type { Executor } from '../../platform/db/client.js';
import type { NewAssistant } from './assistants.tables.js';
import { insertSystemAssistants } from './assistants.repo.js';
import { STANDARD_ASSISTANT_KEY, STANDARD_ASSISTANT_NAME } from './scope.js';

export const SYSTEM_ASSISTANTS: NewAssistant[] = [
  {
    systemKey: STANDARD_ASSISTANT_KEY,
    ragEnabled: true,
    name: STANDARD_ASSISTANT_NAME,
    description: 'The standard assistant: a general conversation with the twin.',
    instructions: '',
  },
  {
    systemKey: 'writing-assistant',
    ragEnabled: true,
    name: 'Writing Assistant',
    description: 'Drafts, edits and improves text.',
    instructions: 'Help the person write clearly. Suggest concrete edits and explain them briefly.',
  },
  {
    systemKey: 'tutor',
    ragEnabled: true,
    name: 'Tutor',
    description: 'Explains a topic step by step and checks understanding.',
    instructions: 'Teach step by step. Ask a short question to check understanding before moving on.',
  },
];

export async function ensureSystemAssistants(db: Executor): Promise<void> {
  await insertSystemAssistants(
    db,
    SYSTEM_ASSISTANTS.map((row) => ({ ...row, userId: null, twinId: null, status: 'active' as const })),
  );
}
