// The measuring client of bench/stream-overhead: one streamed answer read directly from the fake model
// (the baseline) or through the bare relay (both in the model's own format), through the service's SSE
// route, or through the Socket.IO route, each timed from the request to every text piece, and each
// piece from the moment the model wrote it.
import http from 'node:http';
import { io, type Socket } from 'socket.io-client';

export interface Timing {
  /** ms from sending the request to the first text piece. */
  first: number;
  /** ms between consecutive text pieces. */
  gaps: number[];
  chunks: number;
  /** The whole text without the model's stamps, to check the pieces arrived complete and in order. */
  text: string;
  /** ms from the model writing each piece to its arrival here (the model stamps its pieces). */
  transits: number[];
  /** The answer's record, from its `started` frame (the service's SSE route only). */
  historyId?: string;
}

const now = () => performance.timeOrigin + performance.now();

/** Collects the pieces of one answer as they arrive: `piece 7@<epoch ms> ` from bench/servers/fake-model.ts. */
function pieces(sentAt: number) {
  const arrivals: number[] = [];
  const transits: number[] = [];
  let text = '';
  return {
    add(delta: string): void {
      const at = now();
      arrivals.push(at);
      const stamped = /^(piece \d+)@([\d.]+) $/.exec(delta);
      if (!stamped) {
        text += delta;
        return;
      }
      text += `${stamped[1]} `;
      transits.push(at - Number(stamped[2]));
    },
    get count(): number {
      return arrivals.length;
    },
    timing(): Timing {
      return { text, transits, first: arrivals[0] - sentAt, gaps: arrivals.slice(1).map((t, i) => t - arrivals[i]), chunks: arrivals.length };
    },
  };
}

/**
 * The client side is plain node:http (kept-alive connections), for the model and the service alike:
 * the measuring client shares the machine with both, and fetch's web streams cost it several times
 * the CPU per piece. It keeps up to 256 idle connections between answers (node's default), so most
 * streams of a 1,000-stream round open their connection; BENCH_KEEP_ALIVE=all keeps every one, as a
 * reverse proxy keeping its upstream connections to the service would (the first round still opens them).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: process.env.BENCH_KEEP_ALIVE === 'all' ? Infinity : 256 });

function post(url: string, headers: Record<string, string>, body: unknown): Promise<http.IncomingMessage> {
  const json = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) } });
    request.once('response', resolve);
    request.once('error', reject);
    request.end(json);
  });
}

async function readText(response: http.IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const piece of response as AsyncIterable<string>) text += piece;
  return text;
}

/**
 * Reads an event stream and calls onData with each `data:` payload as it arrives: from the socket's
 * data events, not an async iterator (a promise per piece cost the client, which shares the machine
 * with what it measures, a tenth of a core at 10,000 pieces a second).
 */
function readEvents(response: http.IncomingMessage, onData: (data: string) => void): Promise<void> {
  response.setEncoding('utf8');
  let buffer = '';
  return new Promise((resolve, reject) => {
    response.on('data', (piece: string) => {
      buffer += piece;
      let start = 0;
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n', start)) {
        for (const line of buffer.slice(start, end).split('\n')) if (line.startsWith('data: ')) onData(line.slice(6));
        start = end + 2;
      }
      buffer = buffer.slice(start);
    });
    response.once('end', resolve);
    response.once('error', reject);
  });
}

/** What the fake model streams (bench/servers/fake-model.ts): `piece 0 piece 1 …`. */
export const script = (chunks: number) => Array.from({ length: chunks }, (_, i) => `piece ${i} `).join('');


/** The model's stream, read from the model itself or through the bare relay (the same bytes). */
export async function direct(modelUrl: string): Promise<Timing> {
  const answer = pieces(now());
  const response = await post(`${modelUrl}/chat/completions`, {}, { model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Go' }] });
  await readEvents(response, (data) => {
    if (data === '[DONE]') return;
    const content = (JSON.parse(data) as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content;
    if (content) answer.add(content);
  });
  return answer.timing();
}

export async function viaSse(base: string, token: string): Promise<Timing> {
  const answer = pieces(now());
  const response = await post(
    `${base}/api/ai/personal-stream/qanda-stream`,
    { accept: 'text/event-stream', authorization: `Bearer ${token}` },
    { inputs: ['Go'], requestArgs: { ragOnly: false } },
  );
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${await readText(response)}`);
  let historyId: string | undefined;
  await readEvents(response, (data) => {
    const frame = JSON.parse(data) as { type: string; delta?: string; historyId?: string };
    if (frame.type === 'stream') answer.add(frame.delta ?? '');
    else if (frame.type === 'started') historyId = frame.historyId;
  });
  return { ...answer.timing(), historyId };
}

/** A resume of an answer from its start (`GET /api/ai/stream/{historyId}`): its status, the body read to its end. */
export async function resumeStatus(base: string, token: string, historyId: string): Promise<number> {
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = http.request(`${base}/api/ai/stream/${historyId}?after=0`, { agent, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } });
    request.once('response', resolve);
    request.once('error', reject);
    request.end();
  });
  await readText(response);
  return response.statusCode ?? 0;
}

export async function viaSocket(base: string, token: string, socket: Socket, chunks: number): Promise<Timing> {
  const answer = pieces(now());
  const onChunk = (payload: { delta: string }) => answer.add(payload.delta);
  socket.on('RECEIVE_STREAM', onChunk);
  const response = await post(`${base}/api/ai/personal/qanda`, { 'x-access-token': token }, { inputs: ['Go'], requestArgs: { socketId: socket.id } });
  const body = JSON.parse(await readText(response)) as { streamingFailed?: boolean };
  if (body.streamingFailed || response.statusCode !== 200) {
    socket.off('RECEIVE_STREAM', onChunk);
    throw new Error(body.streamingFailed ? 'streamingFailed' : `status ${response.statusCode}: ${JSON.stringify(body)}`);
  }
  // The last chunks may still be on the wire when the request answers.
  const deadline = Date.now() + 5_000;
  while (answer.count < chunks && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  socket.off('RECEIVE_STREAM', onChunk);
  return answer.timing();
}

/** One registered socket per client, client i signed in as person i (mod the number of people). */
export async function connectSockets(base: string, people: Array<{ token: string; userId: string }>, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, (_, j) => {
      const { token, userId } = people[(i + j) % people.length];
      const socket = io(base, { path: '/socket.io', transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
      return new Promise<Socket>((resolve, reject) => {
        socket.once('connect', () => socket.emit('REGISTER', { userId }));
        socket.once('connect_success', () => resolve(socket));
        socket.once('connect_error', reject);
        socket.once('error', (error: unknown) => reject(new Error(JSON.stringify(error))));
        // Closed before it registered (no connect_error then): say so rather than wait forever.
        socket.once('disconnect', (reason: string) => reject(new Error(`socket closed before REGISTER was answered: ${reason}`)));
      });
    });
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}
