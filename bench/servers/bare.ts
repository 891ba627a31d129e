// The baseline: a bare Fastify hello-world, run in its own process like the service.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/hello', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
