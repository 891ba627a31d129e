// The change fence after a request that may write, and only then: a route that only reads (GET, or
// `readOnly`) or tells the feed itself (`changesTold`) sends none; a route taking several methods fences
// after its unsafe ones; routes in plugins registered later are fenced too.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerChangeFence } from './change-fence.js';

async function fencesOf(requests: Array<{ method: 'GET' | 'POST' | 'DELETE'; url: string }>): Promise<number[]> {
  let fences = 0;
  const app = Fastify();
  registerChangeFence(app, { fence: () => void (fences += 1) });
  const ok = async () => ({ ok: true });
  app.get('/read', ok);
  app.post('/write', ok);
  app.post('/read-only', { config: { readOnly: true } }, ok);
  app.post('/told', { config: { changesTold: true } }, ok);
  app.route({ method: ['GET', 'POST'], url: '/both', handler: ok });
  await app.register(async (scope) => void scope.delete('/scoped', ok));
  await app.ready();
  const counts: number[] = [];
  for (const request of requests) {
    const before = fences;
    expect((await app.inject(request)).statusCode).toBe(200);
    counts.push(fences - before);
  }
  await app.close();
  return counts;
}

describe('change fence', () => {
  it('fences after the requests that may write, and only those', async () => {
    expect(
      await fencesOf([
        { method: 'GET', url: '/read' },
        { method: 'POST', url: '/write' },
        { method: 'POST', url: '/read-only' },
        { method: 'POST', url: '/told' },
        { method: 'GET', url: '/both' },
        { method: 'POST', url: '/both' },
        { method: 'DELETE', url: '/scoped' },
      ]),
    ).toEqual([0, 1, 0, 0, 0, 1, 1]);
  });
});
