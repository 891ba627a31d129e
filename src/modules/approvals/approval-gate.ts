// The approval gate (behaviour 5): a connector call that requires approval asks here and waits. The card
// is written, then sent to every tab of the person on every process; the first ending wins (a person's
// decision on any process, the expiry, or the turn's cancel), reaches the waiting turn (directly on this
// process, through the event bus from another, and by re-reading the card should a bus message be lost)
// and every tab. Nothing runs before the gate answers.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError, NotFoundError } from '../../platform/http/errors.js';
import { isObjectId } from '../../platform/ids/ids.js';
import { requireAccess } from '../access/access.js';
import type { EventBus } from '../../platform/realtime/bus.js';
import type { SseFrameOf } from '../../platform/realtime/client-frames.js';
import type { PersonTabs } from '../../platform/realtime/person-tabs.js';
import { conversationGrant, decideCard, endCard, findCard, insertCard, listPending } from './approvals.repo.js';
import { APPROVAL_EVENTS, decidedEvent, presentCard, type ApprovalCardWire, type DecidedEventWire } from './approvals.schemas.js';
import type { CardDecision, CardOrigin, PersonDecision, ToolApprovalRow } from './approvals.tables.js';

export const APPROVALS_DECIDED_CHANNEL = 'approvals.decided';

declare module '../../platform/realtime/bus.js' {
  interface BusEvents {
    /** How a card ended, for the turn waiting on it wherever it runs. */
    'approvals.decided': DecidedEventWire;
  }
}
/** How often a waiting turn re-reads its card, in case the bus lost the message that it was decided. */
export const APPROVAL_RECHECK_MS = 2_000;

export const APPROVAL_MESSAGES = {
  notFound: 'Approval not found',
  decided: 'This approval was already decided',
} as const;

/** A call that needs the person's decision. */
export interface CardRequest {
  twinId: string;
  userId: string;
  historyId: string;
  conversationId: string;
  serverId: string;
  serverName: string;
  tool: string;
  arguments: unknown;
  origin: CardOrigin;
}

/** How the gate answered: approvalId null when an earlier approve_conversation covered the call. */
export interface CardOutcome {
  approvalId: string | null;
  decision: CardDecision;
  decidedAt: Date;
}

/** A card, or how it ended, as a frame of the answer the call belongs to. */
export type ApprovalFrame = SseFrameOf<'approval'> | SseFrameOf<'approval_decided'>;
/**
 * Numbers an approval frame as the next frame of its answer (logged with the answer's frames, so a resume
 * replays it) and answers its seq; undefined when the answer keeps no numbered frames (a JSON answer, voice).
 */
export type NumberApprovalFrame = (frame: ApprovalFrame) => number | undefined;

export interface AskOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The answer's numbering: the card goes to every tab with its seq, and its ending is logged after it. */
  number?: NumberApprovalFrame;
}

export interface ApprovalGate {
  /** Resolves once the call may run (approve, approve_conversation) or not (deny, expired, cancelled). */
  ask(request: CardRequest, options: AskOptions): Promise<CardOutcome>;
  /** A person's decision: 404 for a card that is not theirs, 409 APPROVAL_DECIDED once it has ended. */
  decide(actor: Actor, approvalId: string, decision: PersonDecision): Promise<{ decision: PersonDecision; decidedAt: Date }>;
  /** The person's cards still waiting in their current twin (a tab opened later shows them). */
  pending(actor: Actor): Promise<ApprovalCardWire[]>;
  close(): Promise<void>;
}

export interface ApprovalGateDeps {
  db: Database;
  bus: EventBus;
  tabs: Pick<PersonTabs, 'send'>;
  recheckMs?: number;
  log?: { warn(details: object, message: string): void };
}

export async function createApprovalGate(deps: ApprovalGateDeps): Promise<ApprovalGate> {
  const { db, bus, tabs } = deps;
  const recheckMs = deps.recheckMs ?? APPROVAL_RECHECK_MS;
  /** Cards a turn of this process waits for, by id. */
  const waiting = new Map<string, (ended: { decision: CardDecision; decidedAt: Date }) => void>();

  const off = await bus.subscribe(
    APPROVALS_DECIDED_CHANNEL,
    (event) => waiting.get(event.approvalId)?.({ decision: event.decision, decidedAt: new Date(event.decidedAt) }),
    { schema: decidedEvent },
  );

  /** Tells the waiting turn (here or elsewhere) and every tab how the card ended. */
  async function announce(row: ToolApprovalRow): Promise<void> {
    const event: DecidedEventWire = { approvalId: row.id, decision: row.decision!, decidedAt: row.decidedAt!.toISOString() };
    waiting.get(row.id)?.({ decision: row.decision!, decidedAt: row.decidedAt! });
    await Promise.all([
      bus.publish(APPROVALS_DECIDED_CHANNEL, event).catch((err: unknown) => deps.log?.warn({ err }, 'approval decision not published')),
      // The asking SSE stream has it numbered from its answer (ask's `number`): the tabs skip that stream.
      tabs.send(row.userId, { twinId: row.twinId, answerId: row.historyId, socket: [APPROVAL_EVENTS.decided, event], frame: { type: 'approval_decided', ...event } }),
    ]);
  }

  async function ask(request: CardRequest, options: AskOptions): Promise<CardOutcome> {
    const granted = await conversationGrant(db, request);
    if (granted) return { approvalId: null, decision: 'approve_conversation', decidedAt: granted };
    if (options.signal?.aborted) return { approvalId: null, decision: 'cancelled', decidedAt: new Date() };
    const card = await insertCard(db, { ...request, expiresAt: new Date(Date.now() + options.timeoutMs) });
    let settle!: (ended: { decision: CardDecision; decidedAt: Date }) => void;
    const ended = new Promise<{ decision: CardDecision; decidedAt: Date }>((resolve) => (settle = resolve));
    waiting.set(card.id, settle);
    const end = async (decision: 'expired' | 'cancelled') => {
      let row: ToolApprovalRow | undefined;
      try {
        row = await endCard(db, card.id, decision);
      } catch (err) {
        // The database is not answering: the call does not run all the same.
        deps.log?.warn({ err }, 'approval card could not be ended');
        return settle({ decision, decidedAt: new Date() });
      }
      if (row) return announce(row);
      // Someone decided first: that decision stands.
      const current = await findCard(db, card.id).catch(() => undefined);
      if (current?.decision) settle({ decision: current.decision, decidedAt: current.decidedAt! });
    };
    const timer = setTimeout(() => void end('expired'), options.timeoutMs);
    const onAbort = () => void end('cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const recheck = setInterval(() => {
      void findCard(db, card.id)
        .then((row) => row?.decision && settle({ decision: row.decision, decidedAt: row.decidedAt! }))
        .catch(() => {});
    }, recheckMs);
    try {
      const wire = presentCard(card);
      const seq = numberFrame(options.number, { type: 'approval', ...wire });
      const numbered = seq === undefined ? wire : { ...wire, seq };
      await tabs.send(request.userId, { twinId: request.twinId, socket: [APPROVAL_EVENTS.card, numbered], frame: { type: 'approval', ...numbered } });
      const result = await ended;
      // A resume replays the card: its ending follows it, so a replayed card closes as the live one did.
      numberFrame(options.number, { type: 'approval_decided', approvalId: card.id, decision: result.decision, decidedAt: result.decidedAt.toISOString() });
      return { approvalId: card.id, ...result };
    } finally {
      clearTimeout(timer);
      clearInterval(recheck);
      options.signal?.removeEventListener('abort', onAbort);
      waiting.delete(card.id);
    }
  }

  /** The answer's numbering of a card; a log that cannot take it (closing) costs the card its seq, never the call. */
  function numberFrame(number: NumberApprovalFrame | undefined, frame: ApprovalFrame): number | undefined {
    try {
      return number?.(frame);
    } catch (err) {
      deps.log?.warn({ err }, 'approval card not numbered in its answer');
      return undefined;
    }
  }

  async function decide(actor: Actor, approvalId: string, decision: PersonDecision) {
    if (!isObjectId(approvalId)) throw new NotFoundError(APPROVAL_MESSAGES.notFound, 'APPROVAL_NOT_FOUND');
    // The person's card, within the twins the session reaches (a launch session: its own twin's only).
    await requireAccess(db, actor, 'approval.decide', { card: await findCard(db, approvalId) });
    const row = await decideCard(db, approvalId, actor.userId, decision);
    if (row) {
      await announce(row);
      return { decision, decidedAt: row.decidedAt! };
    }
    const current = await findCard(db, approvalId);
    if (!current) throw new NotFoundError(APPROVAL_MESSAGES.notFound, 'APPROVAL_NOT_FOUND');
    // Pending but past its expiry (its turn stopped waiting without ending it): it ends as expired now.
    if (!current.decision) {
      const expired = await endCard(db, approvalId, 'expired');
      if (expired) await announce(expired);
    }
    throw new AppError(409, APPROVAL_MESSAGES.decided, 'APPROVAL_DECIDED');
  }

  return {
    ask,
    decide,
    async pending(actor) {
      if (!actor.twinId) return [];
      return (await listPending(db, actor.twinId, actor.userId)).map(presentCard);
    },
    async close() {
      for (const settle of waiting.values()) settle({ decision: 'cancelled', decidedAt: new Date() });
      waiting.clear();
      await off().catch(() => {});
    },
  };
}
