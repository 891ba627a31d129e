// Connections' writes held until the loop turn's check phase, then written together: what a reader gets is
// unchanged (every byte, in order, under back-pressure and after a close), only when it reaches the kernel.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { coalesceServerWrites, coalesceWrites } from './coalesced-writes.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A connected client socket and the server's end of the same connection (closed after each test). */
async function socketPair(): Promise<{ client: net.Socket; server: net.Socket }> {
  let accepted!: (socket: net.Socket) => void;
  const serverSide = new Promise<net.Socket>((resolve) => (accepted = resolve));
  const listener = net.createServer(accepted);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const client = net.connect((listener.address() as AddressInfo).port, '127.0.0.1');
  const server = await serverSide;
  closers.push(async () => {
    client.destroy();
    server.destroy();
    await new Promise((resolve) => listener.close(resolve));
  });
  return { client, server };
}

/** Counts the calls that reach the socket's own write (the kernel's side of the stream). */
function countKernelWrites(socket: net.Socket): () => number {
  let calls = 0;
  const write = socket._write;
  const writev = socket._writev!;
  socket._write = function (...args) {
    calls++;
    return write.apply(this, args);
  };
  socket._writev = function (...args) {
    calls++;
    return writev.apply(this, args);
  };
  return () => calls;
}

const checkPhase = () => new Promise((resolve) => setImmediate(resolve));

function readAll(socket: net.Socket, bytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let got = 0;
  return new Promise((resolve) => {
    socket.on('data', (part: Buffer) => {
      parts.push(part);
      got += part.length;
      if (got >= bytes) resolve(Buffer.concat(parts));
    });
  });
}

describe('a coalesced socket', () => {
  it('holds the writes of two connections until the check phase, then writes both', async () => {
    const first = await socketPair();
    const second = await socketPair();
    const counts = [first.server, second.server].map((socket) => {
      const count = countKernelWrites(socket);
      coalesceWrites(socket);
      return count;
    });
    const reads = [readAll(first.client, 5), readAll(second.client, 5)];
    first.server.write('hello');
    second.server.write('world');
    expect(counts.map((count) => count())).toEqual([0, 0]);
    await checkPhase();
    expect(counts.map((count) => count())).toEqual([1, 1]);
    expect((await Promise.all(reads)).map(String)).toEqual(['hello', 'world']);
  });

  it('keeps the order of many writes and calls each callback once', async () => {
    const { client, server } = await socketPair();
    coalesceWrites(server);
    coalesceWrites(server);
    const pieces = Array.from({ length: 200 }, (_, i) => `piece ${i};`);
    const expected = pieces.join('');
    const reading = readAll(client, Buffer.byteLength(expected));
    const called: number[] = [];
    for (const [i, piece] of pieces.entries()) {
      server.write(piece, () => called.push(i));
      if (i % 50 === 0) await checkPhase();
    }
    expect(String(await reading)).toBe(expected);
    await checkPhase();
    expect(called).toEqual(pieces.map((_, i) => i));
  });

  it('delivers more than the kernel buffers hold, with back-pressure, intact', async () => {
    const { client, server } = await socketPair();
    coalesceWrites(server);
    const body = Buffer.alloc(8 * 1024 * 1024, 'abcdefgh');
    client.pause();
    const flushed = server.write(body);
    expect(flushed).toBe(false);
    const reading = readAll(client, body.length);
    client.resume();
    await new Promise((resolve) => server.once('drain', resolve));
    expect((await reading).equals(body)).toBe(true);
  });

  it('a socket destroyed with writes held reports no error and the callback hears of the close', async () => {
    const { server } = await socketPair();
    coalesceWrites(server);
    const errors: unknown[] = [];
    server.on('error', (error) => errors.push(error));
    let heard: Error | null | undefined;
    server.write('never sent', (error) => (heard = error));
    server.destroy();
    await checkPhase();
    await checkPhase();
    expect(errors).toEqual([]);
    expect(heard).toBeInstanceOf(Error);
  });
});

describe('an HTTP server with coalesced writes', () => {
  it('answers pipelined requests and a large body in full, in order', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const server = http.createServer((request, response) => {
      response.setHeader('content-type', 'text/plain');
      response.end(request.url === '/big' ? big : `answer to ${request.url}`);
    });
    coalesceServerWrites(server);
    coalesceServerWrites(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;

    const socket = net.connect(port, '127.0.0.1');
    closers.push(async () => void socket.destroy());
    const text: string[] = [];
    socket.setEncoding('latin1');
    socket.on('data', (part: string) => text.push(part));
    const ended = new Promise((resolve) => socket.on('end', resolve));
    const request = (url: string, last = false) => `GET ${url} HTTP/1.1\r\nhost: x\r\n${last ? 'connection: close\r\n' : ''}\r\n`;
    socket.write(request('/one') + request('/big') + request('/two', true));
    await ended;
    const all = text.join('');
    const bodies = all.split(/HTTP\/1\.1 200 OK\r\n[\s\S]*?\r\n\r\n/).slice(1);
    expect(bodies.map((body) => (body.length > 100 ? `${body.length} bytes` : body))).toEqual(['answer to /one', `${big.length} bytes`, 'answer to /two']);
    expect(bodies[1]).toBe(big);
  });
});
