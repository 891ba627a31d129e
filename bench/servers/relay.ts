// The bare relay of bench/stream-overhead, in its own process: node:http, no framework, no database, no
// logic. Each request is sent on to the model (BENCH_MODEL_URL) and the model's stream is piped back
// as it comes, so what it adds is the floor of relaying a stream through one more Node process.
// Reports its URL to the parent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const model = new URL(`${process.env.BENCH_MODEL_URL}/chat/completions`);
// As many idle connections to the model as answers were open (as the service's model client keeps).
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4_096 });

const server = http.createServer((req, res) => {
  const upstream = http.request(model, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.socket?.setNoDelay(true);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
server.keepAliveTimeout = 65_000;
// The service's accept queue (LISTEN_BACKLOG), so that both are compared with the same queue.
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
});
