// The service for bench/http-overhead: one person (a twin admin), signed in.
import { startBenchService } from './bench-service.js';

await startBenchService({ role: 'admin' });
