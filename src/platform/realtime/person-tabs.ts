// Every open tab of a person, on every process and both transports: an event crosses the event bus to
// every process, and each sends it to the person's Socket.IO sockets and SSE streams it holds.
// No business rules: what the events mean lives with their family (approval cards: modules/approvals).
import type { EventBus } from './bus.js';
import type { SocketEmit, SseFrame, TabEvent } from './client-frames.js';
import type { SseStream } from './sse.js';

export const PERSON_TABS_CHANNEL = 'person.tabs';

/**
 * An event of one twin for every tab of the person: a launch session's tabs hear only their own twin's
 * events. `answerId`: the answer the event belongs to, whose own stream has it from the answer (numbered)
 * and is not sent it again (a frame with that answer's `seq` and `historyId` says so by itself).
 */
export type TwinTabEvent = TabEvent & { twinId: string; answerId?: string };

export interface PersonTabs {
  /** Sends the event to every tab of the person, wherever it is open. Never throws. */
  send(userId: string, event: TwinTabEvent): Promise<void>;
  /**
   * An SSE stream of this process is a tab of the person until the returned function is called (or it
   * closes); a launch session's stream (`launchTwinId`) a tab of that twin only. The stream of an answer
   * (`answerId`) gets that answer's numbered frames (`seq` with its `historyId`) from the answer itself,
   * in order: the tabs do not send them to it again.
   */
  attachSse(userId: string, stream: Pick<SseStream, 'send' | 'closed'>, launchTwinId?: string | null, answerId?: string): () => void;
  close(): Promise<void>;
}

export interface PersonTabsDeps {
  bus: EventBus;
  /** Emits to every registered socket of the person on this process (full sessions', and launch sessions' of the twin). */
  emitToSockets(userId: string, twinId: string, ...emit: SocketEmit): void;
  onError?: (error: unknown) => void;
}

/** What crosses the bus: the event for the person's sockets and the frame for their SSE streams, on every process. */
interface TabsEnvelope {
  userId: string;
  twinId: string;
  socket: SocketEmit;
  frame: SseFrame;
  answerId?: string;
}

declare module './bus.js' {
  interface BusEvents {
    'person.tabs': TabsEnvelope;
  }
}

interface Tab {
  stream: Pick<SseStream, 'send' | 'closed'>;
  launchTwinId: string | null;
  answerId: string | null;
}

/** A frame of the answer `answerId`: its stream had it from the answer. */
const ownFrame = ({ frame, answerId: of }: TabsEnvelope, answerId: string | null): boolean =>
  answerId !== null && (of === answerId || ('seq' in frame && 'historyId' in frame && frame.historyId === answerId));

export async function createPersonTabs({ bus, emitToSockets, onError = () => {} }: PersonTabsDeps): Promise<PersonTabs> {
  const streams = new Map<string, Set<Tab>>();
  const off = await bus.subscribe(PERSON_TABS_CHANNEL, (envelope) => {
    const { userId, twinId, frame } = envelope;
    emitToSockets(userId, twinId, ...envelope.socket);
    for (const { stream, launchTwinId, answerId } of streams.get(userId) ?? []) {
      if (!stream.closed && (!launchTwinId || launchTwinId === twinId) && !ownFrame(envelope, answerId)) stream.send(frame);
    }
  });
  return {
    async send(userId, event) {
      try {
        await bus.publish(PERSON_TABS_CHANNEL, { userId, twinId: event.twinId, socket: event.socket, frame: event.frame, answerId: event.answerId });
      } catch (error) {
        onError(error);
      }
    },
    attachSse(userId, stream, launchTwinId = null, answerId) {
      let set = streams.get(userId);
      if (!set) streams.set(userId, (set = new Set()));
      const tab: Tab = { stream, launchTwinId, answerId: answerId ?? null };
      set.add(tab);
      return () => {
        set.delete(tab);
        if (set.size === 0 && streams.get(userId) === set) streams.delete(userId);
      };
    },
    async close() {
      streams.clear();
      await off().catch(() => {});
    },
  };
}
