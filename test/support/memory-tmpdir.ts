// Where a test run's temporary folders go: the data folders of the service processes tests start, the
// copies of the migrated database, Chromium's profiles, uploads. On a machine with a tmpfs at /dev/shm
// and room on it, there (in memory), unless TEST_TMPDIR names another folder. A test run writes and deletes
// gigabytes of such folders; on disk each write is journalled and written back and each deletion discarded,
// work the kernel did on the run's two cores for nothing the tests check (a process killed mid-write
// leaves the page cache as it was on either). docs/decisions.md, "Tests and the README".
import { accessSync, constants, statfsSync } from 'node:fs';

const MEMORY_FOLDER = '/dev/shm';
/** What a run may hold at once (several data folders, browser profiles, archives), with room to spare. */
const ROOM_NEEDED_BYTES = 4 * 1024 ** 3;

/** The folder for the run's temporary folders, or undefined to keep the system's (os.tmpdir()). */
export function testTmpdir(env: NodeJS.ProcessEnv = process.env, memoryFolder = MEMORY_FOLDER): string | undefined {
  if (env.TEST_TMPDIR) return env.TEST_TMPDIR;
  try {
    accessSync(memoryFolder, constants.W_OK);
    const { bavail, bsize } = statfsSync(memoryFolder);
    return bavail * bsize >= ROOM_NEEDED_BYTES ? memoryFolder : undefined;
  } catch {
    return undefined;
  }
}
