// What a client receives, on either transport, typed by one map: each frame type names its SSE frame's
// fields and, when Socket.IO carries it too, the event and payload it goes as there. The SSE writer, the
// socket emitters and the person's tabs accept only what the map declares, so a frame added later is
// checked on both transports.
/**
 * Every frame a client receives → `{ sse: fields }` (sent as `{type, ...fields}`) and, for a frame both
 * transports carry, `socket: { event, payload }`. Each family declares its frames beside their shapes:
 *
 *   declare module '../../platform/realtime/client-frames.js' {
 *     interface ClientFrames { approval: { sse: ApprovalCardWire; socket: { event: 'TOOL_APPROVAL'; payload: ApprovalCardWire } } }
 *   }
 *
 * `grep -rn "interface ClientFrames" src` lists them all.
 */
export interface ClientFrames {}

type SseEntry = { sse: object };
type SocketEntry = { socket: { event: string; payload: unknown } };

/** Frame types the SSE transport carries. */
export type SseFrameType = { [K in keyof ClientFrames]: ClientFrames[K] extends SseEntry ? K : never }[keyof ClientFrames];
/** One SSE frame of the type K, as written on the stream. */
export type SseFrameOf<K extends SseFrameType> = { type: K } & (ClientFrames[K] extends SseEntry ? ClientFrames[K]['sse'] : never);
/** Any SSE frame. */
export type SseFrame = { [K in SseFrameType]: SseFrameOf<K> }[SseFrameType];

/** Frame types both transports carry. */
export type SharedFrameType = { [K in SseFrameType]: ClientFrames[K] extends SocketEntry ? K : never }[SseFrameType];
type SocketOf<K extends keyof ClientFrames> = ClientFrames[K] extends SocketEntry ? ClientFrames[K]['socket'] : never;

/** Every Socket.IO event of a frame → its payload. */
export type SocketEvents = { [K in keyof ClientFrames as SocketOf<K>['event']]: SocketOf<K>['payload'] };
export type SocketEventName = keyof SocketEvents & string;
/** An emit's arguments, event and payload checked together: `emitEvent(socketId, ...emit)`. */
export type SocketEmit = { [E in SocketEventName]: [event: E, payload: SocketEvents[E]] }[SocketEventName];

/** One frame for every tab of a person: its Socket.IO event and payload, and its SSE frame, of the same type. */
export type TabEvent = {
  [K in SharedFrameType]: { socket: [event: SocketOf<K>['event'], payload: SocketOf<K>['payload']]; frame: SseFrameOf<K> };
}[SharedFrameType];
