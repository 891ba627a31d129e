// Slots shared by the test run's worker processes (vitest runs files in parallel forks): a slot is a
// directory made with mkdir, which only one process can make; it holds the owner's pid, so a slot whose
// owner died is taken back. Used for what must not run twice at once (building the web client) and to cap
// how many files start many processes or a browser at the same time.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Slot {
  release(): void;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The folder of `name`'s slots: one per checkout (two checkouts may run their suites at once). */
function folderOf(name: string): string {
  const checkout = createHash('sha256').update(process.cwd()).digest('hex').slice(0, 12);
  return path.join(os.tmpdir(), `dt-test-slots-${checkout}`, name);
}

function tryTake(slotDir: string): boolean {
  try {
    mkdirSync(slotDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const owner = readOwner(slotDir);
    const starting = owner === '' && Date.now() - (statSync(slotDir, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 10_000;
    if (starting || (owner !== '' && alive(Number(owner)))) return false;
    rmSync(slotDir, { recursive: true, force: true }); // its owner died without releasing it
    return false;
  }
  writeFileSync(path.join(slotDir, 'pid'), String(process.pid));
  return true;
}

function readOwner(slotDir: string): string {
  try {
    return readFileSync(path.join(slotDir, 'pid'), 'utf8');
  } catch {
    return ''; // being written: its owner is alive
  }
}

/** Waits for one of `count` slots named `name`, and takes it until release() (or this process's end). */
export async function takeSlot(name: string, count = 1): Promise<Slot> {
  const folder = folderOf(name);
  mkdirSync(folder, { recursive: true });
  for (;;) {
    for (let index = 0; index < count; index++) {
      const slotDir = path.join(folder, String(index));
      if (tryTake(slotDir)) {
        const release = () => rmSync(slotDir, { recursive: true, force: true });
        process.once('exit', release);
        return { release: () => (process.off('exit', release), release()) };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs `work` holding the one slot named `name`. */
export async function withSlot<T>(name: string, work: () => T | Promise<T>): Promise<T> {
  const slot = await takeSlot(name);
  try {
    return await work();
  } finally {
    slot.release();
  }
}
