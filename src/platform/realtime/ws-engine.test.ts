// The WebSocket engine under the socket server, spoken to in raw RFC 6455 from a TCP client: the
// handshake, masked and fragmented messages, ping and pong, the closing handshake both ways, and the
// protocol errors a peer is told of with their close code (1002, 1007, 1009).
import { createHash } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsEngine, type WsConnection } from './ws-engine.js';

const MAX_PAYLOAD = 1024;
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

interface Received {
  data: Buffer;
  isBinary: boolean;
}
interface ServerSide {
  connection: WsConnection;
  messages: Received[];
  errors: Error[];
  closed: Promise<{ code: number; reason: string }>;
}

let server: http.Server;
let port: number;
const engine = new WsEngine({ maxPayload: MAX_PAYLOAD });
const accepted: Array<(side: ServerSide) => void> = [];
const pendingSides: ServerSide[] = [];
const clients: RawClient[] = [];

beforeAll(async () => {
  server = http.createServer((_, res) => res.end());
  server.on('upgrade', (request, socket, head) => {
    engine.handleUpgrade(request, socket, head, (connection) => {
      const messages: Received[] = [];
      const errors: Error[] = [];
      const closed = new Promise<{ code: number; reason: string }>((resolve) => {
        connection.on('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() }));
      });
      connection.on('message', (data: Buffer, isBinary: boolean) => {
        messages.push({ data: Buffer.from(data), isBinary });
        // An echo, so the client can tell the message arrived whole.
        connection.send(isBinary ? Buffer.from(data) : `echo:${data.toString()}`);
      });
      connection.on('error', (error: Error) => errors.push(error));
      const side = { connection, messages, errors, closed };
      const waiter = accepted.shift();
      if (waiter) waiter(side);
      else pendingSides.push(side);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const client of clients) client.socket.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const nextSide = () => new Promise<ServerSide>((resolve) => (pendingSides.length ? resolve(pendingSides.shift()!) : accepted.push(resolve)));

interface Frame {
  fin: boolean;
  opcode: number;
  masked: boolean;
  payload: Buffer;
}

/** A client frame: masked unless told otherwise. */
function frame(opcode: number, payload: Buffer | string, options: { fin?: boolean; mask?: boolean; rsv?: number } = {}): Buffer {
  const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const mask = options.mask ?? true;
  const length = data.length;
  const header = Buffer.alloc(length < 126 ? 2 : length < 65536 ? 4 : 10);
  header[0] = ((options.fin ?? true) ? 0x80 : 0) | ((options.rsv ?? 0) << 4) | opcode;
  header[1] = (mask ? 0x80 : 0) | (length < 126 ? length : length < 65536 ? 126 : 127);
  if (length >= 126 && length < 65536) header.writeUInt16BE(length, 2);
  if (length >= 65536) header.writeBigUInt64BE(BigInt(length), 2);
  if (!mask) return Buffer.concat([header, data]);
  const key = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
  const masked = Buffer.from(data.map((byte, i) => byte ^ key[i % 4]!));
  return Buffer.concat([header, key, masked]);
}

function closePayload(code: number, reason = ''): Buffer {
  const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2);
  return payload;
}

/** A raw TCP client: the handshake's answer, then the server's frames as they arrive, then its end. */
class RawClient {
  readonly socket: net.Socket;
  response = '';
  readonly frames: Frame[] = [];
  ended = false;
  private buffer = Buffer.alloc(0);
  private handshakeDone = false;
  private waiters: Array<() => void> = [];

  constructor() {
    this.socket = net.connect(port, '127.0.0.1');
    clients.push(this);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('end', () => {
      this.ended = true;
      this.wake();
    });
    this.socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    this.socket.on('error', () => {});
  }

  static async open(extra: Buffer = Buffer.alloc(0)): Promise<RawClient> {
    const client = new RawClient();
    client.socket.write(Buffer.concat([Buffer.from(upgradeRequest()), extra]));
    await client.until(() => client.handshakeDone);
    return client;
  }

  send(...frames: Buffer[]): void {
    for (const data of frames) this.socket.write(data);
  }

  async until(condition: () => boolean): Promise<void> {
    while (!condition()) {
      if (this.ended && !condition()) throw new Error(`the server ended the connection; frames: ${JSON.stringify(this.frames.map((f) => [f.opcode, f.payload.toString()]))}; response: ${this.response}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async nextFrame(index: number): Promise<Frame> {
    await this.until(() => this.frames.length > index);
    return this.frames[index]!;
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (!this.handshakeDone) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end === -1) return this.wake();
      this.response = this.buffer.subarray(0, end).toString('latin1');
      this.buffer = this.buffer.subarray(end + 4);
      this.handshakeDone = true;
    }
    for (;;) {
      if (this.buffer.length < 2) break;
      const first = this.buffer[0]!;
      const second = this.buffer[1]!;
      let length = second & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffer.length < 4) break;
        length = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) break;
        length = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const masked = (second & 0x80) !== 0;
      if (masked) offset += 4;
      if (this.buffer.length < offset + length) break;
      this.frames.push({ fin: (first & 0x80) !== 0, opcode: first & 0x0f, masked, payload: Buffer.from(this.buffer.subarray(offset, offset + length)) });
      this.buffer = this.buffer.subarray(offset + length);
    }
    this.wake();
  }
}

function upgradeRequest(headers: Record<string, string> = {}): string {
  const all = { Host: `127.0.0.1:${port}`, Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': KEY, 'Sec-WebSocket-Version': '13', ...headers };
  return `GET /socket HTTP/1.1\r\n${Object.entries(all)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}

/** The close frame's code as the client reads it. */
const closeCode = (frame: Frame) => frame.payload.readUInt16BE(0);

describe('the WebSocket engine', () => {
  it('answers the handshake with the key accepted (RFC 6455 1.3)', async () => {
    const client = await RawClient.open();
    const side = await nextSide();
    const accept = createHash('sha1').update(`${KEY}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    expect(client.response.split('\r\n')[0]).toBe('HTTP/1.1 101 Switching Protocols');
    expect(client.response).toContain(`Sec-WebSocket-Accept: ${accept}`);
    expect(accept).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
    expect(side.connection.readyState).toBe(1);
    client.socket.destroy();
    expect((await side.closed).code).toBe(1006);
  });

  it('refuses an upgrade without a key (400) or of another protocol version (426)', async () => {
    for (const [headers, status] of [
      [{ 'Sec-WebSocket-Key': '' }, '400'],
      [{ 'Sec-WebSocket-Key': 'short' }, '400'],
      [{ 'Sec-WebSocket-Version': '12' }, '426'],
    ] as const) {
      const client = new RawClient();
      client.socket.write(upgradeRequest(headers));
      await client.until(() => client.ended);
      expect(client.response.split(' ')[1] ?? '').toBe(status);
    }
  });

  it('takes masked text and binary messages, of every length encoding, and sends unmasked ones back', async () => {
    const client = await RawClient.open();
    const side = await nextSide();
    const medium = Buffer.alloc(300, 7);
    client.send(frame(0x1, 'héllo'), frame(0x2, medium));
    const text = await client.nextFrame(0);
    expect(text).toMatchObject({ fin: true, opcode: 0x1, masked: false });
    expect(text.payload.toString()).toBe('echo:héllo');
    const binary = await client.nextFrame(1);
    expect(binary).toMatchObject({ fin: true, opcode: 0x2, masked: false });
    expect(binary.payload.equals(medium)).toBe(true);
    expect(side.messages.map((m) => [m.data.toString(), m.isBinary])).toEqual([
      ['héllo', false],
      [medium.toString(), true],
    ]);
    // From the server: a 64-bit length (over 65,535 bytes) and a 16-bit one.
    const large = Buffer.alloc(70_000, 3);
    side.connection.send(large);
    const sent = await client.nextFrame(2);
    expect(sent.opcode).toBe(0x2);
    expect(sent.payload.equals(large)).toBe(true);
    client.socket.destroy();
    await side.closed;
  });

  it('puts a fragmented message together, answering a ping sent between its fragments, even byte by byte', async () => {
    const client = await RawClient.open();
    const side = await nextSide();
    const bytes = Buffer.concat([
      frame(0x1, 'one ', { fin: false }),
      frame(0x9, 'are you there'),
      frame(0x0, 'two ', { fin: false }),
      frame(0x0, 'three', { fin: true }),
    ]);
    for (let i = 0; i < bytes.length; i++) client.socket.write(bytes.subarray(i, i + 1));
    const pong = await client.nextFrame(0);
    expect(pong).toMatchObject({ opcode: 0xa, masked: false });
    expect(pong.payload.toString()).toBe('are you there');
    const echo = await client.nextFrame(1);
    expect(echo.payload.toString()).toBe('echo:one two three');
    expect(side.messages.map((m) => m.data.toString())).toEqual(['one two three']);
    client.socket.destroy();
    await side.closed;
  });

  it('reads a frame that came in the same packet as the handshake', async () => {
    const client = await RawClient.open(frame(0x1, 'early'));
    const echo = await client.nextFrame(0);
    expect(echo.payload.toString()).toBe('echo:early');
    const side = await nextSide();
    client.socket.destroy();
    await side.closed;
  });

  it('answers a close frame with its code and ends the connection', async () => {
    const client = await RawClient.open();
    const side = await nextSide();
    client.send(frame(0x8, closePayload(1000, 'bye')));
    const close = await client.nextFrame(0);
    expect(close.opcode).toBe(0x8);
    expect(closeCode(close)).toBe(1000);
    await client.until(() => client.ended);
    client.socket.end();
    expect(await side.closed).toEqual({ code: 1000, reason: 'bye' });
    expect(side.errors).toEqual([]);
  });

  it('closes from its side with a close frame, then ends once the peer answers', async () => {
    const client = await RawClient.open();
    const side = await nextSide();
    side.connection.close();
    const close = await client.nextFrame(0);
    expect(close.opcode).toBe(0x8);
    expect(side.connection.readyState).toBe(2);
    // A message sent now is refused.
    const refused = await new Promise<Error | null | undefined>((resolve) => side.connection.send('late', resolve));
    expect(refused).toBeInstanceOf(Error);
    client.send(frame(0x8, closePayload(1000)));
    await client.until(() => client.ended);
    client.socket.end();
    expect((await side.closed).code).toBe(1000);
    expect(side.connection.readyState).toBe(3);
  });

  it.each([
    ['a message over the size limit', () => frame(0x2, Buffer.alloc(MAX_PAYLOAD + 1)), 1009],
    ['fragments over the size limit together', () => Buffer.concat([frame(0x1, Buffer.alloc(600, 97), { fin: false }), frame(0x0, Buffer.alloc(600, 97))]), 1009],
    ['a 64-bit length of 4 GB or more', () => Buffer.from([0x82, 0xff, 0, 0, 0, 1, 0, 0, 0, 0]), 1009],
    ['an unmasked client frame', () => frame(0x1, 'plain', { mask: false }), 1002],
    ['text that is not UTF-8', () => frame(0x1, Buffer.from([0x68, 0xc3, 0x28])), 1007],
    ['an RSV bit without an extension', () => frame(0x1, 'x', { rsv: 4 }), 1002],
    ['an unknown opcode', () => frame(0x3, 'x'), 1002],
    ['a fragmented ping', () => frame(0x9, 'x', { fin: false }), 1002],
    ['a ping over 125 bytes', () => frame(0x9, Buffer.alloc(126)), 1002],
    ['a continuation with nothing to continue', () => frame(0x0, 'x'), 1002],
    ['a new message inside a fragmented one', () => Buffer.concat([frame(0x1, 'a', { fin: false }), frame(0x1, 'b')]), 1002],
    ['a close frame of one byte', () => frame(0x8, Buffer.from([3])), 1002],
    ['a close code a peer may not send', () => frame(0x8, closePayload(1005)), 1002],
    ['a close reason that is not UTF-8', () => frame(0x8, Buffer.concat([closePayload(1000), Buffer.from([0xff])])), 1007],
  ])('closes on %s with code %i and delivers nothing', async (_, bytes, code) => {
    const client = await RawClient.open();
    const side = await nextSide();
    client.send(bytes(), frame(0x1, 'after'));
    const close = await client.nextFrame(0);
    expect(close.opcode).toBe(0x8);
    expect(closeCode(close)).toBe(code);
    await client.until(() => client.ended);
    client.socket.end();
    expect((await side.closed).code).toBe(code);
    expect(side.messages).toEqual([]);
    expect(client.frames).toHaveLength(1);
    expect(side.errors).toHaveLength(1);
  });
});
