// The relay's socket: a plain WebSocket on the HTTP server's upgrade at /api/ai/rt/ws. The session's
// one-use token (query `token=`, or the subprotocol `twin-token.<token>`) is used in one statement (any
// process can check it: the row is in the database); a token unknown, used, expired or of another
// session is refused with 401 before the upgrade. Calls end by their route from any process (the bus).
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { EventBus } from '../../platform/realtime/bus.js';
import { CLOSE, VoiceCall } from './rt-call.js';
import type { RelayDeps } from './rt-protocol.js';
import { useToken } from './rt-sessions.repo.js';
import { RELAY_PATH, RT_END_CHANNEL } from './rt-session.service.js';

export const TOKEN_PROTOCOL_PREFIX = 'twin-token.';

export interface Relay {
  /** Calls live on this process. */
  readonly calls: ReadonlyMap<string, VoiceCall>;
  close(): Promise<void>;
}

export async function attachRelay(server: Server, bus: EventBus, deps: RelayDeps): Promise<Relay> {
  const calls = new Map<string, VoiceCall>();
  // The subprotocol answered: one the client offered that is not its token, else the token's own.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 1024 * 1024,
    // Audio frames go on as they come: no compression to wait for (the client's text is still checked).
    perMessageDeflate: false,
    handleProtocols: (offered) => [...offered].find((protocol) => !protocol.startsWith(TOKEN_PROTOCOL_PREFIX)) ?? [...offered][0] ?? false,
  });
  const offEnd = await bus.subscribe(RT_END_CHANNEL, ({ sessionId }) => void calls.get(sessionId)?.end(CLOSE.ended));

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://relay');
    if (url.pathname !== RELAY_PATH) return; // Socket.IO's, or nobody's
    void accept(request, socket, head, url).catch((error: unknown) => {
      deps.log.warn({ err: error }, 'voice relay upgrade failed');
      refuse(socket, 500, 'The voice session could not start');
    });
  };

  async function accept(request: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const token = url.searchParams.get('token') ?? tokenOfProtocols(request.headers['sec-websocket-protocol']);
    if (!token) return refuse(socket, 401, 'A voice session token is required');
    const row = await useToken(deps.turn.db, token, deps.processId ?? null, url.searchParams.get('session') ?? undefined);
    if (!row) return refuse(socket, 401, 'The voice session token is unknown, used or expired');
    wss.handleUpgrade(request, socket, head, (client) => {
      calls.set(row.id, new VoiceCall(deps, row, client, () => calls.delete(row.id)));
    });
  }

  server.on('upgrade', onUpgrade);
  return {
    calls,
    async close() {
      server.off('upgrade', onUpgrade);
      await offEnd();
      await Promise.all([...calls.values()].map((call) => call.end(CLOSE.shutdown)));
      wss.close();
    },
  };
}

function tokenOfProtocols(header: string | undefined): string | undefined {
  const protocol = header
    ?.split(',')
    .map((value) => value.trim())
    .find((value) => value.startsWith(TOKEN_PROTOCOL_PREFIX));
  return protocol?.slice(TOKEN_PROTOCOL_PREFIX.length) || undefined;
}

/** An HTTP answer in place of the upgrade, in the spec's failure shape. */
function refuse(socket: Duplex, status: 401 | 500, message: string): void {
  if (!socket.writable) return;
  const body = JSON.stringify({ success: false, message, ...(status === 401 ? { code: 'RT_TOKEN_INVALID' } : {}) });
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Internal Server Error'}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
