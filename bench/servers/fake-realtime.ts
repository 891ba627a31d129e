// The bench's fake real-time voice provider in its own process, at <url>/realtime?model=: every
// `input_audio_buffer.append` goes straight back as `response.output_audio.delta` with the same audio
// (the frame's bytes rewritten, not parsed: the provider's cost per frame stays small and the same for
// both paths of the bench, which reach it straight and through the relay); a `session.update` is
// answered `session.updated`. Reports its URL to the parent.
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

const APPEND = Buffer.from('{"type":"input_audio_buffer.append","audio":"');
const DELTA = Buffer.from('{"type":"response.output_audio.delta","delta":"');

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/v1/realtime', perMessageDeflate: false, backlog: 4096 });
wss.on('connection', (socket) => {
  socket.on('message', (data: Buffer, binary) => {
    if (!binary && data.length > APPEND.length && data.compare(APPEND, 0, APPEND.length, 0, APPEND.length) === 0) {
      socket.send(Buffer.concat([DELTA, data.subarray(APPEND.length)]), { binary: false });
      return;
    }
    const event = JSON.parse(data.toString()) as { type?: string; session?: unknown };
    if (event.type === 'session.update') socket.send(JSON.stringify({ type: 'session.updated', session: event.session }));
  });
});
wss.once('listening', () => process.send?.({ url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}/v1` }));
