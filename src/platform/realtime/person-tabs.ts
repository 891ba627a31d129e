// Every open tab of a person, on every process and both transports: an event goes to the person's
// Socket.IO sockets (the socket server's own room emit, which the Redis adapter carries to the other
// processes) and, through the event bus, to the SSE streams each process holds for that person.
// No business rules: what the events mean lives with their family (approval cards: modules/approvals).
import type { EventBus } from './bus.js';
import type { SocketEmit, SseFrame, TabEvent } from './client-frames.js';
import type { SseStream } from './sse.js';

export const PERSON_TABS_CHANNEL = 'person.tabs';

export interface PersonTabs {
  /** Sends the event to every tab of the person, wherever it is open. Never throws. */
  send(userId: string, event: TabEvent): Promise<void>;
  /** An SSE stream of this process is a tab of the person until the returned function is called (or it closes). */
  attachSse(userId: string, stream: Pick<SseStream, 'send' | 'closed'>): () => void;
  close(): Promise<void>;
}

export interface PersonTabsDeps {
  bus: EventBus;
  /** Emits to every registered socket of the person on any process (the socket server's room). */
  emitToSockets(userId: string, ...emit: SocketEmit): void;
  onError?: (error: unknown) => void;
}

/** What crosses the bus: the frame for the person's SSE streams on every process. */
interface TabsEnvelope {
  userId: string;
  frame: SseFrame;
}

declare module './bus.js' {
  interface BusEvents {
    'person.tabs': TabsEnvelope;
  }
}

export async function createPersonTabs({ bus, emitToSockets, onError = () => {} }: PersonTabsDeps): Promise<PersonTabs> {
  const streams = new Map<string, Set<Pick<SseStream, 'send' | 'closed'>>>();
  const off = await bus.subscribe(PERSON_TABS_CHANNEL, ({ userId, frame }) => {
    for (const stream of streams.get(userId) ?? []) {
      if (!stream.closed) stream.send(frame);
    }
  });
  return {
    async send(userId, event) {
      try {
        emitToSockets(userId, ...event.socket);
        await bus.publish(PERSON_TABS_CHANNEL, { userId, frame: event.frame });
      } catch (error) {
        onError(error);
      }
    },
    attachSse(userId, stream) {
      let set = streams.get(userId);
      if (!set) streams.set(userId, (set = new Set()));
      set.add(stream);
      return () => {
        set.delete(stream);
        if (set.size === 0 && streams.get(userId) === set) streams.delete(userId);
      };
    },
    async close() {
      streams.clear();
      await off().catch(() => {});
    },
  };
}
