// The entry of a CPU pool's worker thread (pool.ts): loads the tasks module it was given and answers
// each { id, task, input } with { id, output } or { id, error }. An error keeps its name and message.
import { parentPort, workerData } from 'node:worker_threads';

type Task = (input: never) => unknown;

const { tasksUrl } = workerData as { tasksUrl: string };
const { tasks } = (await import(tasksUrl)) as { tasks: Record<string, Task> };

parentPort!.on('message', async ({ id, task, input }: { id: number; task: string; input: never }) => {
  try {
    const run = tasks[task];
    if (!run) throw new Error(`No CPU task named '${task}'`);
    parentPort!.postMessage({ id, output: await run(input) });
  } catch (err) {
    const error = err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) };
    parentPort!.postMessage({ id, error });
  }
});
