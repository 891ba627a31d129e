// The fake OpenAI-compatible model in its own process, answering every chat request with the same
// scripted stream (BENCH_CHUNKS pieces, BENCH_GAP_MS apart). Reports its URL to the parent.
import { startFakeModelServer } from '../../test/support/fake-model-server.js';

const chunks = Number(process.env.BENCH_CHUNKS ?? 20);
const gapMs = Number(process.env.BENCH_GAP_MS ?? 50);
const server = await startFakeModelServer();
server.setDefault({ chunks: Array.from({ length: chunks }, (_, i) => `piece ${i} `), gapMs });
// Recorded requests would grow without bound over a long run.
setInterval(() => void (server.requests.length = 0), 1_000).unref();
process.send?.({ url: server.url });
