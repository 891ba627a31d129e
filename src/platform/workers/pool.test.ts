// The CPU pool: tasks run on threads and answer their output; an error keeps its name; the event loop
// keeps turning while a task holds a thread; a closed pool refuses work.
import { afterEach, describe, expect, it } from 'vitest';
import { createCpuPool, siblingModule, type CpuPool } from './pool.js';

let pool: CpuPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('CPU pool', () => {
  it('runs a task on a thread and answers its output, copied', async () => {
    pool = createCpuPool(siblingModule(import.meta.url, 'pool-fixture-tasks'), 2);
    const input = { words: ['a', 'b'], bytes: new Uint8Array([1, 2, 3]) };

    await expect(pool.run('echo', input)).resolves.toEqual(input);
    await expect(pool.run('nowhere', {})).rejects.toThrow("No CPU task named 'nowhere'");
  }, 60_000);

  it('keeps the name of a task\'s error, so a caller can tell its kind', async () => {
    pool = createCpuPool(siblingModule(import.meta.url, 'pool-fixture-tasks'), 1);

    const failure = await pool.run('fail', { name: 'ExtractionError' }).catch((err: Error) => err);

    expect(failure).toMatchObject({ name: 'ExtractionError', message: 'it failed on purpose' });
  }, 60_000);

  it('leaves the event loop free while a task is busy', async () => {
    pool = createCpuPool(siblingModule(import.meta.url, 'pool-fixture-tasks'), 1);
    await pool.run('echo', {}); // the thread is up
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);

    await pool.run('spin', { ms: 500 });
    clearInterval(timer);

    // A loop held for 500 ms would tick once or twice; a free one about 50 times (fewer on a loaded machine).
    expect(ticks).toBeGreaterThan(15);
  }, 60_000);

  it('refuses work once closed', async () => {
    const closed = createCpuPool(siblingModule(import.meta.url, 'pool-fixture-tasks'), 1);
    await closed.close();

    await expect(closed.run('echo', {})).rejects.toThrow('The CPU pool is closed');
  });
});
