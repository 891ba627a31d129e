// The primary of a process group reads only the first bytes of a connection (to see its request line),
// then hands the connection over: every byte after them must stay in the kernel for the API process.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { stopReading } from './process-group.js';

describe('stopReading', () => {
  const closers: Array<() => void> = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  /** A server that reads a connection's first chunk the way the primary does, then stops reading. */
  async function primaryLike(): Promise<{ port: number; accepted: Promise<{ socket: net.Socket; head: Buffer }> }> {
    let accept!: (value: { socket: net.Socket; head: Buffer }) => void;
    const accepted = new Promise<{ socket: net.Socket; head: Buffer }>((resolve) => (accept = resolve));
    const server = net.createServer({ pauseOnConnect: true }, (socket) => {
      socket.once('data', (head: Buffer) => {
        stopReading(socket);
        accept({ socket, head });
      });
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => server.close());
    return { port: (server.address() as net.AddressInfo).port, accepted };
  }

  it('reads nothing after the first chunk: what the client sends next stays for whoever takes the connection', async () => {
    const { port, accepted } = await primaryLike();
    const client = net.connect(port, '127.0.0.1');
    closers.push(() => client.destroy());
    client.write('GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n');
    const { socket, head } = await accepted;
    closers.push(() => socket.destroy());
    expect(head.toString('latin1')).toBe('GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n');

    // A stream refills its buffer on the next tick; give it several, and the client time to send more.
    client.write('Host: example.test\r\n\r\n');
    await sleep(100);
    expect(socket.bytesRead).toBe(head.length);
    expect(socket.readableLength).toBe(0);

    // The bytes are still in the kernel: a reader of the same descriptor gets them whole.
    const handle = (socket as net.Socket & { _handle: unknown })._handle;
    (socket as net.Socket & { _handle: unknown })._handle = null;
    // `handle` is how Node itself wraps a handle it received from another process (child_process).
    const taken = new net.Socket({ handle, readable: true, writable: true } as net.SocketConstructorOpts);
    closers.push(() => taken.destroy());
    const rest = await new Promise<Buffer>((resolve) => taken.once('data', resolve));
    expect(rest.toString('latin1')).toBe('Host: example.test\r\n\r\n');
  });
});
