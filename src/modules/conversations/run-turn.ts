// One conversation turn, in four phases every kind of turn shares: admit (caps, the payer, the hold and
// the record's opening) → context (assistant instructions, guardrails, memory, retrieval) → run (the part
// each kind differs in) → settle (the charge, the hold given back, the record's end). `runTurn` is the
// chat turn of both transports (Socket.IO and SSE bind a TurnSink to it); another kind of turn passes
// its own run to `takeTurn`. Any failure past admission ends the record as failed, uncharged.
import { failTurn } from './turn-end.js';
import type { TurnDeps } from './turn-deps.js';
import { admit, type AdmittedTurn } from './turn-phase-admit.js';
import { gatherContext, type TurnContext } from './turn-phase-context.js';
import { runChat } from './turn-phase-run-chat.js';
import { settle } from './turn-phase-settle.js';
import type { RunOutcome, TurnCaller, TurnInput, TurnResult, TurnSink } from './turn-types.js';

/** The part of a turn a kind of turn brings: what it does between its context and its settle. */
export type TurnRun = (deps: TurnDeps, turn: AdmittedTurn, context: TurnContext, sink: TurnSink) => Promise<RunOutcome>;

/** A chat turn: the model's text stream with the turn's tools (turn-phase-run-chat.ts). */
export function runTurn(deps: TurnDeps, caller: TurnCaller, input: TurnInput, sink: TurnSink): Promise<TurnResult> {
  return takeTurn(deps, caller, input, sink, runChat);
}

export async function takeTurn(deps: TurnDeps, caller: TurnCaller, input: TurnInput, sink: TurnSink, run: TurnRun): Promise<TurnResult> {
  const turn = await admit(deps, caller, input);
  try {
    sink.onStart?.({ historyId: turn.held.record.id, conversationId: turn.held.record.conversationId });
    const context = await gatherContext(deps, turn, sink);
    const outcome = await run(deps, turn, context, sink);
    return await settle(deps, turn, context, outcome);
  } catch (error) {
    // Never leave a record streaming: an unexpected failure ends it as failed, uncharged, its hold given back.
    await failTurn(deps.db, turn.held.record, turn.held.payer, error).catch(() => {});
    throw error;
  } finally {
    deps.journal.finished(turn.held.record.id);
  }
}
