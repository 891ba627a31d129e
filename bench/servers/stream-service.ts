// The service for bench/stream-overhead: the real Q&A routes (SSE and Socket.IO), so each streamed
// answer also pays for its checks, history record and charge. The model is the deployment endpoint
// (BENCH_MODEL_URL); every turn is charged, so the person's balance outlasts the run.
import { startBenchService } from './bench-service.js';

await startBenchService({
  role: 'user',
  credits: 1_000_000_000,
  env: { OPENAI_BASE_URL: process.env.BENCH_MODEL_URL ?? '', DEFAULT_MODEL: 'bench-model' },
});
