// A Socket.IO turn runs on the process that holds its socket (docs/architecture.md, "Where a turn
// runs"). A Q&A POST may land on any API process; when the socket named in requestArgs.socketId is held
// by another, this asks that process over the event bus to run the turn and answers with its outcome.
// The answer's pieces then go from the model to the socket inside one process: none crosses Redis.
//
// The asker publishes the turn on a channel every API process serves. The holder answers on the asker's
// own channel: 'accepted', an 'alive' every few seconds while the turn runs, then 'answered' or
// 'failed'. Every other process answers 'declined', so when none holds the socket the asker knows as
// soon as all have answered (the publish says how many it reached). An asker that gives up withdraws
// its request, and a holder that already accepted it cancels the turn.
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../platform/http/actor.js';
import { AppError } from '../../platform/http/errors.js';
import type { EventBus } from '../../platform/realtime/bus.js';
import type { QandaAnswer, QandaBody } from './conversations.schemas.js';

export const HANDOFF_CHANNEL = 'turn.handoff';
/** The asker's own channel, one per process: the replies to its requests. */
const replyChannel = (processId: string) => `turn.handoff.${processId}` as const;

export const HANDOFF_MESSAGES = {
  lost: 'The answer was lost: the process running it stopped. Ask again.',
  failed: 'Something went wrong',
} as const;

export interface HandoffTimings {
  /** How long the other processes have to accept or decline; then the socket counts as held by none. */
  acceptMs: number;
  /** How often a process running a handed turn says it still is. */
  aliveMs: number;
  /** Silence after which the asker gives a handed turn up as lost (its process stopped). */
  lostMs: number;
}

export const DEFAULT_HANDOFF_TIMINGS: HandoffTimings = { acceptMs: 2_000, aliveMs: 5_000, lostMs: 15_000 };

/** A Socket.IO turn as the route received it; the socket is requestArgs.socketId. */
export interface HandedTurn {
  actor: Actor;
  body: QandaBody;
  socketId: string;
}

/**
 * What running a turn here gives: the route's answer. Not the balance row it charged: the runner told
 * its own change feed, and the asker catches up with its feed before answering (conversations.service.ts).
 */
export interface TurnOutcome {
  answer: QandaAnswer;
}

export type HandoffResult = { kind: 'not-held' } | { kind: 'answered'; outcome: TurnOutcome };

export type TurnRunner = (turn: HandedTurn, signal: AbortSignal) => Promise<TurnOutcome>;

export interface TurnHandoff {
  /** Has the process holding the socket run the turn: its outcome, or 'not-held'. Its failures are thrown as AppError. */
  delegate(turn: HandedTurn): Promise<HandoffResult>;
  /** Runs the turns other processes hand over (until then, and after stopServing, they are declined). */
  serve(run: TurnRunner): void;
  /** Declines from now on and waits for the handed turns running here to end. */
  stopServing(): Promise<void>;
  /**
   * Leaves the bus: a turn still awaited from another process fails as lost; a turn still running here
   * for another is cancelled and no longer said to be alive (its asker gives it up unless its answer
   * arrives first).
   */
  close(): Promise<void>;
}

export interface TurnHandoffDeps {
  bus: EventBus;
  /** This process holds the socket, registered for this user. */
  holds(socketId: string, userId: string): boolean;
  log: { error(details: object, message: string): void };
  timings?: Partial<HandoffTimings>;
}

interface WireError {
  status: number;
  message: string;
  code?: string;
  extra?: Record<string, unknown>;
  detail?: string | Record<string, unknown>;
}

type Request = { type: 'run'; id: string; from: string; turn: HandedTurn } | { type: 'withdraw'; id: string; from: string };
type Reply =
  | { id: string; type: 'declined' | 'accepted' | 'alive' }
  | { id: string; type: 'answered'; outcome: TurnOutcome }
  | { id: string; type: 'failed'; error: WireError };

declare module '../../platform/realtime/bus.js' {
  interface BusEvents {
    'turn.handoff': Request;
    [asker: `turn.handoff.${string}`]: Reply;
  }
}

/** A delegation this process awaits, fed the replies addressed to it. */
interface Awaited {
  onReply(reply: Reply): void;
  fail(error: AppError): void;
}

export async function createTurnHandoff(deps: TurnHandoffDeps): Promise<TurnHandoff> {
  const { bus, log } = deps;
  const timings = { ...DEFAULT_HANDOFF_TIMINGS, ...deps.timings };
  const processId = randomUUID();
  const awaited = new Map<string, Awaited>();
  /** Turns this process runs for others, by request id: aborting one cancels it. */
  const running = new Map<string, { controller: AbortController; alive: NodeJS.Timeout }>();
  let runner: TurnRunner | undefined;
  let serving = true;
  /** Waiting for the turns running here to end (stopServing). */
  const drainWaiters: Array<() => void> = [];

  const reply = (to: string, message: Reply): void => {
    bus.publish(replyChannel(to), message).catch((error: unknown) => log.error({ err: error, requestId: message.id }, 'a handed turn could not answer its asker'));
  };

  async function runForOther(request: Extract<Request, { type: 'run' }>): Promise<void> {
    const controller = new AbortController();
    const alive = setInterval(() => reply(request.from, { id: request.id, type: 'alive' }), timings.aliveMs);
    running.set(request.id, { controller, alive });
    reply(request.from, { id: request.id, type: 'accepted' });
    try {
      const outcome = await runner!(request.turn, controller.signal);
      reply(request.from, { id: request.id, type: 'answered', outcome });
    } catch (error) {
      if (!(error instanceof AppError)) log.error({ err: error, requestId: request.id }, 'a handed conversation turn failed');
      reply(request.from, { id: request.id, type: 'failed', error: toWire(error) });
    } finally {
      clearInterval(alive);
      running.delete(request.id);
      if (running.size === 0) for (const done of drainWaiters.splice(0)) done();
    }
  }

  const offRequests = await bus.subscribe(HANDOFF_CHANNEL, (request) => {
    if (request.from === processId) return;
    if (request.type === 'withdraw') {
      running.get(request.id)?.controller.abort();
      return;
    }
    if (serving && runner && deps.holds(request.turn.socketId, request.turn.actor.userId)) void runForOther(request);
    else reply(request.from, { id: request.id, type: 'declined' });
  });
  const offReplies = await bus.subscribe(replyChannel(processId), (answer) => awaited.get(answer.id)?.onReply(answer));

  return {
    delegate(turn) {
      const id = randomUUID();
      return new Promise<HandoffResult>((resolve, reject) => {
        let others: number | undefined;
        let declined = 0;
        let accepted = false;
        let timer = setTimeout(() => {
          // No answer in time: held by none we can reach. A late holder cancels what it started.
          bus.publish(HANDOFF_CHANNEL, { type: 'withdraw', id, from: processId }).catch(() => {});
          settle(() => resolve({ kind: 'not-held' }));
        }, timings.acceptMs);
        const settle = (finish: () => void): void => {
          clearTimeout(timer);
          awaited.delete(id);
          finish();
        };
        const lostAfterSilence = (): void => {
          clearTimeout(timer);
          timer = setTimeout(() => settle(() => reject(lostError())), timings.lostMs);
        };
        const declinedByAll = (): void => {
          if (!accepted && others !== undefined && declined >= others) settle(() => resolve({ kind: 'not-held' }));
        };
        awaited.set(id, {
          onReply(answer) {
            switch (answer.type) {
              case 'declined':
                declined++;
                return declinedByAll();
              case 'accepted':
                accepted = true;
                return lostAfterSilence();
              case 'alive':
                if (accepted) lostAfterSilence();
                return;
              case 'answered':
                return settle(() => resolve({ kind: 'answered', outcome: answer.outcome }));
              case 'failed':
                return settle(() => reject(fromWire(answer.error)));
            }
          },
          fail: (error) => settle(() => reject(error)),
        });
        bus.publish(HANDOFF_CHANNEL, { type: 'run', id, from: processId, turn }).then(
          (reached) => {
            // The publish reached this process too (it serves the channel).
            others = reached - 1;
            declinedByAll();
          },
          (error: unknown) => settle(() => reject(error)),
        );
      });
    },

    serve(run) {
      runner = run;
    },

    async stopServing() {
      serving = false;
      if (running.size > 0) await new Promise<void>((resolve) => drainWaiters.push(resolve));
    },

    async close() {
      serving = false;
      for (const { controller, alive } of running.values()) {
        clearInterval(alive);
        controller.abort();
      }
      for (const waiting of [...awaited.values()]) waiting.fail(lostError());
      await Promise.all([offRequests(), offReplies()]).catch(() => {});
    },
  };
}

function lostError(): AppError {
  return new AppError(503, HANDOFF_MESSAGES.lost, 'TURN_LOST');
}

function toWire(error: unknown): WireError {
  if (!(error instanceof AppError)) return { status: 500, message: HANDOFF_MESSAGES.failed };
  return { status: error.status, message: error.message, code: error.code, extra: error.extra, detail: error.detail };
}

function fromWire(error: WireError): AppError {
  return new AppError(error.status, error.message, error.code, error.extra, error.detail);
}
