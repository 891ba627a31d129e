// The turn's first phase, admit: who asks and in which twin, the assistant (behaviour 1) and its model
// and price, then the caps, the payer's hold and the record's opening in one admission step
// (turn-limits.ts), so racing turns cannot pass a cap or the balance together. The context reads start
// beside the opening (turn-phase-context.ts); a refused turn discards them and writes nothing.
import { promptTokenBound } from '../../ai/prompt.js';
import { BadRequestError, NotFoundError } from '../../platform/http/errors.js';
import { resolveAssistant, resolveStandardAssistant, type ResolvedAssistant } from '../assistants/resolver.js';
import { payerFor } from '../credits/payer.js';
import { assertTwinUsable } from '../twins/twins.service.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { CONTEXT_ALLOWANCE_TOKENS, HeldRecord, holdOf, isPriced } from './turn-billing.js';
import type { TurnDeps } from './turn-deps.js';
import { admitTurn } from './turn-limits.js';
import { chooseModel, type ModelChoice } from './turn-model.js';
import { startContextReads, type ContextTurn, type EarlyContext } from './turn-phase-context.js';
import { startRecord } from './turn-record.repo.js';
import { askerOf, type Asker, type TurnCaller, type TurnInput } from './turn-types.js';

export const TURN_MESSAGES = {
  noTwin: 'Choose a Digital Twin before starting a conversation',
  noQuestion: 'A question is required',
  twinNotFound: 'Institution not found',
} as const;

/** A turn past its admission: its record is open and holds what the turn may cost. */
export interface AdmittedTurn extends ContextTurn {
  caller: TurnCaller;
  asker: Asker;
  input: TurnInput;
  question: string;
  twin: TwinRow;
  assistant: ResolvedAssistant;
  choice: ModelChoice;
  /** The most the model may answer: the custom model's limit, else the twin's. */
  outputLimit: number;
  /** The prompt the opening held for (the question and an allowance for the context). */
  openingInputBound: number;
  /** The record and its hold, as the turn knows them (the settle starts from it). */
  held: HeldRecord;
  /** The context reads started beside the opening. */
  early: EarlyContext;
}

export async function admit(deps: TurnDeps, caller: TurnCaller, input: TurnInput): Promise<AdmittedTurn> {
  const asker = askerOf(caller);
  const question = (input.inputs.at(-1) ?? '').trim();
  if (!question) throw new BadRequestError(TURN_MESSAGES.noQuestion, 'QUESTION_REQUIRED');
  if (!asker.twinId) throw new BadRequestError(TURN_MESSAGES.noTwin, 'NO_CURRENT_TWIN');
  // What the turn needs first: the twin and the assistant, from the caches as a rule.
  const [twin, assistant] = await Promise.all([deps.reads.twin(asker.twinId), assistantFor(deps, caller, input)]);
  if (!twin) throw new NotFoundError(TURN_MESSAGES.twinNotFound);
  assertTwinUsable(twin);
  const choice = await chooseModel(deps, twin.id, assistant);
  const early = startContextReads(deps, { caller, asker, input, question, assistant });
  // A priced turn holds its most expensive cost from the balance that pays: its prompt (the question and
  // an allowance for the context, read beside the opening) and its whole output limit, at its price.
  const outputLimit = choice.custom?.maxTokens ?? twin.maxCompletionTokens;
  const openingInputBound = promptTokenBound([question]) + CONTEXT_ALLOWANCE_TOKENS;
  const holdAmount = isPriced(choice.price) ? holdOf(openingInputBound, outputLimit, choice.price) : 0;
  const payer = payerFor(twin, asker.user);
  const opened = await admitTurn(deps.db, twin, asker.id, payer, holdAmount, (executor, hold) =>
    startRecord(executor, {
      twinId: twin.id,
      userId: asker.id,
      conversationId: input.conversationId,
      assistantId: assistant.assistant.id,
      assistantName: assistant.assistant.name,
      question,
      models: [choice.resolved.modelId],
      hold,
      processId: deps.journal.processId,
    }),
  );
  deps.journal.opened(opened.id);
  const held = new HeldRecord(deps.db, opened, payer);
  return { caller, asker, input, question, twin, assistant, choice, outputLimit, openingInputBound, held, early };
}

/** Behaviour 1 for a person; a visitor, who picks from no list yet, runs New Conversation. */
function assistantFor(deps: TurnDeps, caller: TurnCaller, input: TurnInput): Promise<ResolvedAssistant> {
  if (caller.kind === 'visitor') return resolveStandardAssistant(deps.reads.standardAssistant);
  return resolveAssistant(deps.db, caller.actor, input.assistantId, deps.reads.standardAssistant);
}
