// The Socket.IO route's choice of where a turn runs, with this process's socket table and the handoff
// as stand-ins (the turn's own deps are the test app's, through test/support/turn-deps.ts): a socket held here runs the turn here (qanda.test.ts covers that path end to end); a
// socket held elsewhere hands the turn over, and this process answers with its outcome once its
// caches have heard the changes committed meanwhile (the turn's charge, told by the process that ran it).
// A socket no process holds: qanda.test.ts (the turn runs here, streamingFailed names its record).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { plainActor } from '../../../test/support/assistants.js';
import { turnDepsFor } from '../../../test/support/turn-deps.js';
import { until } from '../../../test/support/until.js';
import { createConversationService, type ConversationDeps } from './conversations.service.js';
import type { StreamRouter } from './socket-events.js';
import type { HandedTurn, HandoffResult } from './turn-handoff.js';

const ada = plainActor('ada');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

const answer = { success: true as const, answer: 'Hi', outputs: ['Hi'], usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, credits: 0.2, historyId: 'h-1', conversationId: 'c-1', cancelled: false };

/** The service with nothing held here, a handoff answering `result`, and its change feed's catch-ups (ended by hand). */
function serviceHandingOver(result: HandoffResult) {
  const handed: HandedTurn[] = [];
  const catchUps: Array<() => void> = [];
  const streams = { holds: () => false } as Partial<StreamRouter> as StreamRouter;
  const deps: ConversationDeps = {
    ...turnDepsFor(t, t.config.model),
    streams,
    handoff: { delegate: async (turn: HandedTurn) => (handed.push(turn), result) },
    changes: { committed: () => {}, catchUp: () => new Promise<void>((resolve) => catchUps.push(resolve)) },
    heartbeatMs: t.config.sseHeartbeatMs,
    tabs: { attachSse: () => () => {} },
    streamLog: t.platform.streamLog,
    control: { register: () => () => {} },
    resumeGraceSeconds: t.config.resume.graceSeconds,
  };
  return { service: createConversationService(deps), handed, catchUps };
}

describe('qanda with a socket held by another process', () => {
  it("hands the turn over, and answers with its outcome once this process's caches have caught up with the charge", async () => {
    const { service, handed, catchUps } = serviceHandingOver({ kind: 'answered', outcome: { answer } });
    const body = { inputs: ['Hello?'], requestArgs: { socketId: 'elsewhere', assistantId: 'a-1' } };

    let answered: unknown;
    const asked = service.qanda(ada, body).then((result) => (answered = result));
    await until(() => catchUps.length === 1);
    expect(handed).toEqual([{ actor: ada, body, socketId: 'elsewhere' }]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answered).toBeUndefined();
    catchUps[0]();
    expect(await asked).toEqual(answer);
  });
});
