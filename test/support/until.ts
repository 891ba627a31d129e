// Waits for what a test cannot await directly (a notice from the database, a chunk on another socket,
// a record a turn writes after answering): polls every 10 ms, fails after timeoutMs, saying what `explain`
// gives of the state it waited on (what arrived instead), when given.
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 3_000, explain?: () => unknown): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      const seen = explain ? `; ${JSON.stringify(explain())}` : '';
      throw new Error(`condition not met within ${timeoutMs} ms${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
