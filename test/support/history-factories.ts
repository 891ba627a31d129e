// Test helpers for history: a finished record with every kind of working detail, written through the
// same start/finish API the conversation engine uses. Used by the history tests only.
import type { Executor } from '../../src/platform/db/client.js';
import { startRecord } from '../../src/modules/conversations/turn-record.repo.js';
import { finishRecord, type FinishRecordInput } from '../../src/modules/history/history.records.js';
import type { HistoryRow, RetrievalEntry } from '../../src/modules/history/history.tables.js';

export function retrievalEntry(overrides: Partial<RetrievalEntry> = {}): RetrievalEntry {
  return { uploadId: 'a'.repeat(24), originalname: 'notes.md', chunkText: 'The moon is made of rock.', chunkIndex: 0, length: 25, score: 0.8, mode: 'RAG', confidential: false, ...overrides };
}

export const fullDetail: Omit<FinishRecordInput, 'answer' | 'status'> = {
  usage: { inputTokens: 100, outputTokens: 20 },
  models: ['gpt-4o'],
  credits: 0.75,
  toolCalls: [{ id: 't1', server: 'calendar', tool: 'list_events', arguments: { day: 'today' }, result: 'Dentist at 10', status: 'ok', approval: { decision: 'approve', decidedAt: '2030-01-01T00:00:00.000Z' } }],
  subagents: [{ id: 's1', name: 'researcher', task: 'find the dentist', transcript: [{ role: 'user', content: 'find it' }, { role: 'assistant', content: 'Dr. Smile' }], status: 'complete', steps: 2, failedSteps: 0 }],
  ragSearch: [retrievalEntry(), retrievalEntry({ chunkIndex: 1, chunkText: 'It orbits the earth.' })],
  memories: [{ key: 'name', value: 'Ada', shared: false }],
  reasoning: 'The user wants their schedule.',
};

export async function buildRecord(
  db: Executor,
  input: { twinId: string; userId: string; question?: string; answer?: string; conversationId?: string; at?: Date; detail?: Partial<FinishRecordInput> },
): Promise<HistoryRow> {
  const started = await startRecord(db, {
    twinId: input.twinId,
    userId: input.userId,
    conversationId: input.conversationId,
    assistantId: 'c'.repeat(24),
    assistantName: 'Tutor',
    question: input.question ?? 'What is on my calendar?',
    at: input.at,
  });
  return finishRecord(db, started.id, { ...fullDetail, ...input.detail, answer: input.answer ?? 'You see the dentist at 10.', status: 'complete', at: input.at });
}
