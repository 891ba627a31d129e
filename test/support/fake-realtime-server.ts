// A fake real-time voice provider on loopback: a WebSocket server speaking the OpenAI Realtime event
// protocol (GA names) at /realtime?model=. It records every event it receives (and the Authorization
// header and model of each connection). On `input_audio_buffer.commit` it answers an exchange: the
// person's transcript (the text of the appended audio frames, which tests send as base64 text), then
// audio deltas and transcript deltas of the answer, then `response.done` with usage. When the person's
// words carry CALL_MARKER (`call:<tool>`, then optionally its JSON arguments), the response is a function call of that tool instead; the
// function's output and a `response.create` then produce a spoken answer that quotes the output.
// `echoFrames` sends every appended audio frame back at once as an output audio delta (the bench).
// `hears` stands in for the provider's turn detection with real audio (a browser's microphone): after
// `framesPerTurn` appended frames it takes the next of its transcripts as what was said (then as above).
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export const CALL_MARKER = /call:([A-Za-z0-9_-]+)/;
/** Usage of each `response.done`. */
export const FAKE_USAGE = { input_tokens: 300, output_tokens: 600, input_token_details: { text_tokens: 100, audio_tokens: 200 }, output_token_details: { text_tokens: 100, audio_tokens: 500 } };

export interface FakeRealtimeConnection {
  model: string | null;
  authorization: string | undefined;
  received: Array<Record<string, unknown>>;
  socket: WebSocket;
  closed: boolean;
}

export interface FakeRealtimeServer {
  /** The OpenAI-style base URL (http://127.0.0.1:<port>/v1). */
  url: string;
  connections: FakeRealtimeConnection[];
  close(): Promise<void>;
}

export async function startFakeRealtimeServer(options: { echoFrames?: boolean; hears?: { transcripts: string[]; framesPerTurn: number } } = {}): Promise<FakeRealtimeServer> {
  const connections: FakeRealtimeConnection[] = [];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/v1/realtime' });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  wss.on('connection', (socket, request) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const connection: FakeRealtimeConnection = { model: url.searchParams.get('model'), authorization: request.headers.authorization, received: [], socket, closed: false };
    connections.push(connection);
    let heard = '';
    let seq = 0;
    let frames = 0;
    const transcripts = [...(options.hears?.transcripts ?? [])];
    const send = (event: Record<string, unknown>) => socket.send(JSON.stringify({ type: event.type, event_id: `evt_${++seq}`, ...event }));
    socket.on('close', () => (connection.closed = true));
    socket.on('message', (data) => {
      const event = JSON.parse(data.toString()) as Record<string, unknown>;
      if (options.echoFrames && event.type === 'input_audio_buffer.append') {
        socket.send(JSON.stringify({ type: 'response.output_audio.delta', delta: event.audio }));
        return;
      }
      connection.received.push(event);
      if (event.type === 'session.update') send({ type: 'session.updated', session: event.session });
      if (event.type === 'input_audio_buffer.append' && !options.hears) heard += Buffer.from(String(event.audio), 'base64').toString('utf8');
      const detected = options.hears && event.type === 'input_audio_buffer.append' && ++frames % options.hears.framesPerTurn === 0 && transcripts.length > 0;
      if (event.type === 'input_audio_buffer.commit' || detected) {
        const words = detected ? transcripts.shift()! : heard;
        heard = '';
        send({ type: 'conversation.item.input_audio_transcription.completed', item_id: `item_${seq}`, content_index: 0, transcript: words });
        const call = CALL_MARKER.exec(words);
        if (call) respondWithCall(send, call[1]!, argumentsAfter(words, call));
        else respondSpoken(send, `You said: ${words}`);
      }
      if (event.type === 'response.create') {
        const outputs = connection.received.filter((item) => item.type === 'conversation.item.create').map((item) => (item.item as { output?: string }).output);
        respondSpoken(send, `The tool answered: ${outputs.at(-1) ?? ''}`);
      }
    });
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

function respondSpoken(send: (event: Record<string, unknown>) => void, text: string): void {
  const id = `resp_${Math.random().toString(36).slice(2)}`;
  send({ type: 'response.created', response: { id, status: 'in_progress' } });
  for (const word of text.split(/(?<= )/)) {
    send({ type: 'response.output_audio.delta', response_id: id, delta: Buffer.from(`audio:${word}`).toString('base64') });
    send({ type: 'response.output_audio_transcript.delta', response_id: id, delta: word });
  }
  send({ type: 'response.output_audio_transcript.done', response_id: id, transcript: text });
  send({ type: 'response.done', response: { id, status: 'completed', output: [{ type: 'message', role: 'assistant' }], usage: FAKE_USAGE } });
}

/** The JSON object said after `call:<tool>`, else the echo tool's `{text: "from voice"}`. */
function argumentsAfter(words: string, call: RegExpExecArray): string {
  const rest = words.slice(call.index + call[0].length).trim();
  return rest.startsWith('{') ? rest : JSON.stringify({ text: 'from voice' });
}

function respondWithCall(send: (event: Record<string, unknown>) => void, tool: string, args: string): void {
  const id = `resp_${Math.random().toString(36).slice(2)}`;
  const item = { type: 'function_call', call_id: `call_${id}`, name: tool, arguments: args };
  send({ type: 'response.created', response: { id, status: 'in_progress' } });
  send({ type: 'response.function_call_arguments.done', response_id: id, call_id: item.call_id, name: tool, arguments: item.arguments });
  send({ type: 'response.output_item.done', response_id: id, item });
  send({ type: 'response.done', response: { id, status: 'completed', output: [item], usage: FAKE_USAGE } });
}
