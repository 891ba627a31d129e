// The bench's fake OpenAI-compatible model in its own process: every chat request is answered with
// the same stream of BENCH_CHUNKS pieces, BENCH_GAP_MS apart (usage at the end, as an endpoint sends it
// with include_usage). Each piece carries the moment it was written (`piece 7@<epoch ms> `), so the
// client can tell how long a piece took from the model to it (through the service or not) apart from
// how late the model itself was. Reports its URL to the parent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const chunks = Number(process.env.BENCH_CHUNKS ?? 100);
const gapMs = Number(process.env.BENCH_GAP_MS ?? 100);
const now = () => performance.timeOrigin + performance.now();
const piece = (content: string | null, finish: string | null = null) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', model: 'bench-model', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    const next = () => {
      if (res.destroyed) return;
      if (sent < chunks) {
        res.write(piece(`piece ${sent}@${now().toFixed(3)} `));
        sent++;
        setTimeout(next, gapMs);
        return;
      }
      res.write(piece(null, 'stop'));
      res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: chunks, total_tokens: 10 + chunks } })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    next();
  });
});
// A queue long enough for every client: a dropped connection would retry after 1 s and blur the baseline.
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
});
