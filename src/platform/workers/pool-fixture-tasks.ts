// Tasks for pool.test.ts: an echo, a failure with a name of its own, and a busy loop.
export const tasks = {
  echo: (input: unknown) => input,
  fail: ({ name }: { name: string }) => {
    const error = new Error('it failed on purpose');
    error.name = name;
    throw error;
  },
  spin: ({ ms }: { ms: number }) => {
    const until = Date.now() + ms;
    let turns = 0;
    while (Date.now() < until) turns++;
    return turns > 0;
  },
};
