// The turn handoff between processes, with several handoffs on one bus as several processes would be:
// the memory bus, and Redis when TEST_REDIS_URL is set (a bus each, as in separate processes). The
// runner stands for the conversation service's local turn; the route-level behaviour across real
// processes is in test/streaming-multiprocess.test.ts.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import { createMemoryBus, createRedisBus, type EventBus } from '../../platform/realtime/bus.js';
import { plainActor } from '../../../test/support/assistants.js';
import { until } from '../../../test/support/until.js';
import { createTurnHandoff, HANDOFF_CHANNEL, HANDOFF_MESSAGES, type HandedTurn, type HandoffTimings, type TurnHandoff, type TurnOutcome } from './turn-handoff.js';

const turnFor = (userId: string, socketId: string): HandedTurn => ({
  actor: plainActor(userId),
  socketId,
  body: { inputs: ['Hello?'], requestArgs: { socketId, assistantId: 'a-1' } },
});

const outcomeOf = (text: string): TurnOutcome => ({
  answer: { success: true, answer: text, outputs: [text], usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, credits: 0.5, historyId: 'h-1', conversationId: 'c-1', cancelled: false },
});

/** A turn the test ends by hand, and what its runner saw. */
function controllable() {
  const started: Array<{ turn: HandedTurn; signal: AbortSignal; finish(outcome: TurnOutcome): void }> = [];
  const runner = (turn: HandedTurn, signal: AbortSignal) => new Promise<TurnOutcome>((resolve) => started.push({ turn, signal, finish: resolve }));
  return { started, runner };
}

const errors: Array<{ details: object; message: string }> = [];
const log = { error: (details: object, message: string) => void errors.push({ details, message }) };

for (const kind of ['memory', 'redis'] as const) {
  const redisUrl = process.env.TEST_REDIS_URL;
  describe.runIf(kind === 'memory' || redisUrl)(`turn handoff over the ${kind} bus`, () => {
    const closers: Array<() => Promise<void>> = [];
    let shared: EventBus | undefined;

    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
      shared = undefined;
      errors.length = 0;
    });

    /** A bus as one process has it: one memory bus shared by all (one process), or a Redis bus each. */
    async function busForProcess(): Promise<EventBus> {
      if (kind === 'redis') {
        const bus = await createRedisBus(redisUrl!);
        closers.push(() => bus.close());
        return bus;
      }
      if (!shared) {
        const bus = createMemoryBus();
        shared = bus;
        closers.push(() => bus.close());
      }
      return shared;
    }

    /** A process: its handoff, holding the sockets given (registered for their users). */
    async function processWith(held: Record<string, string>, timings?: Partial<HandoffTimings>, bus?: EventBus): Promise<TurnHandoff> {
      const handoff = await createTurnHandoff({ bus: bus ?? (await busForProcess()), holds: (socketId, userId) => held[socketId] === userId, log, timings });
      closers.push(() => handoff.close());
      return handoff;
    }

    it('runs the turn on the process holding the socket and answers the asker with its outcome', async () => {
      const asker = await processWith({});
      const holder = await processWith({ 'socket-b': 'ada' });
      const bystander = await processWith({ 'socket-c': 'ada' });
      const onHolder = controllable();
      const onBystander = controllable();
      holder.serve(onHolder.runner);
      bystander.serve(onBystander.runner);
      asker.serve(() => Promise.reject(new Error('the asker runs nothing')));

      const turn = turnFor('ada', 'socket-b');
      const result = asker.delegate(turn);
      await until(() => onHolder.started.length === 1);
      expect(onHolder.started[0].turn).toEqual(turn);
      expect(onBystander.started).toEqual([]);

      onHolder.started[0].finish(outcomeOf('Hi Ada'));
      expect(await result).toEqual({ kind: 'answered', outcome: outcomeOf('Hi Ada') });
    });

    it('answers not-held as soon as every other process declined: no holder, or held for another person', async () => {
      // A long accept window: the answer must come from the declines, not from waiting it out.
      const asker = await processWith({}, { acceptMs: 60_000 });
      const other = await processWith({ 'socket-b': 'bob' });
      const run = controllable();
      other.serve(run.runner);

      expect(await asker.delegate(turnFor('ada', 'socket-nowhere'))).toEqual({ kind: 'not-held' });
      // Bob's socket is not Ada's: the turn does not run there.
      expect(await asker.delegate(turnFor('ada', 'socket-b'))).toEqual({ kind: 'not-held' });
      expect(run.started).toEqual([]);
    });

    it('answers not-held at once when no other process serves handoffs', async () => {
      const alone = await processWith({}, { acceptMs: 60_000 });
      expect(await alone.delegate(turnFor('ada', 'socket-b'))).toEqual({ kind: 'not-held' });
    });

    it("gives the holder's refusal to the asker as the same failure", async () => {
      const asker = await processWith({});
      const holder = await processWith({ 'socket-b': 'ada' });
      holder.serve(async () => {
        throw new AppError(402, 'Not enough credits', 'INSUFFICIENT_CREDITS', { balance: 0 }, 'pool empty');
      });

      const failure = await asker.delegate(turnFor('ada', 'socket-b')).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AppError);
      expect(failure).toMatchObject({ status: 402, message: 'Not enough credits', code: 'INSUFFICIENT_CREDITS', extra: { balance: 0 }, detail: 'pool empty' });
    });

    it('answers an unexpected failure of the holder as 500 without its details, and the holder logs it', async () => {
      const asker = await processWith({});
      const holder = await processWith({ 'socket-b': 'ada' });
      holder.serve(async () => {
        throw new Error('connection reset by database');
      });

      const failure = await asker.delegate(turnFor('ada', 'socket-b')).catch((error: unknown) => error);
      expect(failure).toMatchObject({ status: 500, message: HANDOFF_MESSAGES.failed });
      expect(errors).toEqual([expect.objectContaining({ message: 'a handed conversation turn failed' })]);
    });

    it('keeps waiting for a long turn while its process says it is alive, and gives it up once that stops', async () => {
      const timings = { aliveMs: 20, lostMs: 150 };
      const asker = await processWith({}, timings);
      const holder = await processWith({ 'socket-b': 'ada', 'socket-c': 'ada' }, timings);
      const run = controllable();
      holder.serve(run.runner);

      // Alive: a turn several times longer than lostMs is still answered.
      const long = asker.delegate(turnFor('ada', 'socket-b'));
      await until(() => run.started.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      run.started[0].finish(outcomeOf('Still here'));
      expect(await long).toMatchObject({ kind: 'answered' });

      // The holder's process stops mid-turn and its turn never answers: once it is no longer said to
      // be alive, the asker gives it up.
      const lost = asker.delegate(turnFor('ada', 'socket-c'));
      await until(() => run.started.length === 2);
      await holder.close();
      expect(run.started[1].signal.aborted).toBe(true);
      const failure = await lost.catch((error: unknown) => error);
      expect(failure).toMatchObject({ status: 503, code: 'TURN_LOST', message: HANDOFF_MESSAGES.lost });
    });

    it('withdraws a request nobody accepted in time, and a holder cancels a withdrawn turn', async () => {
      const bus = await busForProcess();
      const asker = await processWith({}, { acceptMs: 100 }, bus);
      // A process that hears requests and never answers (stalled). Other tests may share the channel
      // (one Redis): only this test's requests count, by their socket and their ids.
      const socketId = `socket-${randomUUID()}`;
      const heard: Array<{ type: string; id: string; turn?: HandedTurn }> = [];
      const ours = new Set<string>();
      const listenerBus = kind === 'redis' ? await busForProcess() : bus;
      const off = await listenerBus.subscribe(HANDOFF_CHANNEL, (message) => {
        const request = message as { type: string; id: string; turn?: HandedTurn };
        if (request.turn?.socketId === socketId) ours.add(request.id);
        if (ours.has(request.id)) heard.push(request);
      });
      closers.push(off);

      expect(await asker.delegate(turnFor('ada', socketId))).toEqual({ kind: 'not-held' });
      await until(() => heard.some((message) => message.type === 'withdraw'));
      const [request, withdraw] = heard;
      expect(request.type).toBe('run');
      expect(withdraw).toMatchObject({ type: 'withdraw', id: request.id });

      // A holder that had started that turn cancels it when the withdrawal arrives.
      const holder = await processWith({ [socketId]: 'ada' });
      const run = controllable();
      holder.serve(run.runner);
      const other = await processWith({});
      const pending = other.delegate(turnFor('ada', socketId));
      await until(() => run.started.length === 1);
      const runId = heard.find((message) => message.type === 'run' && message.id !== request.id)!.id;
      await listenerBus.publish(HANDOFF_CHANNEL, { type: 'withdraw', id: runId, from: 'the-asker' });
      await until(() => run.started[0].signal.aborted);
      run.started[0].finish(outcomeOf('cancelled'));
      await pending;
    });

    it('stopServing declines new turns and waits for the ones running here', async () => {
      const asker = await processWith({}, { acceptMs: 60_000 });
      const holder = await processWith({ 'socket-b': 'ada', 'socket-c': 'ada' });
      const run = controllable();
      holder.serve(run.runner);

      const running = asker.delegate(turnFor('ada', 'socket-b'));
      await until(() => run.started.length === 1);
      let stopped = false;
      const stopping = holder.stopServing().then(() => (stopped = true));

      expect(await asker.delegate(turnFor('ada', 'socket-c'))).toEqual({ kind: 'not-held' });
      expect(stopped).toBe(false);
      run.started[0].finish(outcomeOf('Last one'));
      await stopping;
      expect(await running).toMatchObject({ kind: 'answered' });
      expect(run.started).toHaveLength(1);
    });

    it('a process that closes fails the turns it still awaits as lost', async () => {
      const asker = await processWith({});
      const holder = await processWith({ 'socket-b': 'ada' });
      const run = controllable();
      holder.serve(run.runner);

      const pending = asker.delegate(turnFor('ada', 'socket-b'));
      await until(() => run.started.length === 1);
      const failed = expect(pending).rejects.toMatchObject({ status: 503, code: 'TURN_LOST' });
      await asker.close();
      await failed;
      run.started[0].finish(outcomeOf('Too late'));
    });
  });
}
