// The Socket.IO route's choice of where a turn runs, with this process's socket table and the handoff
// as stand-ins: a socket held here runs the turn here (qanda.test.ts covers that path end to end); a
// socket held elsewhere hands the turn over, and this process answers with its outcome.
import { describe, expect, it } from 'vitest';
import type { RowChange } from '../../platform/db/change-feed.js';
import { plainActor } from '../../../test/support/assistants.js';
import { createConversationService, type ConversationDeps } from './conversations.service.js';
import type { StreamRouter } from './socket-events.js';
import type { HandedTurn, HandoffResult } from './turn-handoff.js';

const ada = plainActor('ada');

const answer = { success: true as const, answer: 'Hi', outputs: ['Hi'], usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, credits: 0.2, historyId: 'h-1', conversationId: 'c-1', cancelled: false };

/** The service with nothing held here, a handoff answering `result`, and a record of what it was told. */
function serviceHandingOver(result: HandoffResult) {
  const handed: HandedTurn[] = [];
  const told: RowChange[] = [];
  const streams = { holds: () => false } as Partial<StreamRouter> as StreamRouter;
  const deps = {
    streams,
    handoff: { delegate: async (turn: HandedTurn) => (handed.push(turn), result) },
    changes: { committed: (change: RowChange) => void told.push(change) },
  } as Partial<ConversationDeps> as ConversationDeps;
  return { service: createConversationService(deps), handed, told };
}

describe('qanda with a socket held by another process', () => {
  it("hands the turn over, answers with its outcome and tells this process's caches of the charged balance", async () => {
    const { service, handed, told } = serviceHandingOver({ kind: 'answered', outcome: { answer, balanceChange: { table: 'users', key: 'ada' } } });
    const body = { inputs: ['Hello?'], requestArgs: { socketId: 'elsewhere', assistantId: 'a-1' } };

    expect(await service.qanda(ada, body)).toEqual(answer);
    expect(handed).toEqual([{ actor: ada, body, socketId: 'elsewhere' }]);
    expect(told).toEqual([{ table: 'users', key: 'ada' }]);
  });

  it('answers streamingFailed when no process holds the socket for this person', async () => {
    const { service, told } = serviceHandingOver({ kind: 'not-held' });
    expect(await service.qanda(ada, { inputs: ['Hello?'], requestArgs: { socketId: 'gone' } })).toEqual({ success: true, streamingFailed: true });
    expect(told).toEqual([]);
  });
});
