// BENCH_INSIDE=1 (bench:footprint): loaded into each service process (`--import`, before the entry) to
// say where its resident memory goes. Plain JavaScript, as `node dist/main.js` runs with no loader. Off by
// default (the service then starts exactly as `npm start` starts it). On SIGUSR2 a process writes to
// $BENCH_INSIDE_DIR/<pid>.json its main thread's V8 heap by space, its external and ArrayBuffer memory,
// at the bench's last reading its heap used after a full collection (what is live, against garbage
// not yet collected), and from /proc/self/smaps the resident part of the WebAssembly memories (the embedded database's, in
// its worker thread: each is a reservation of several GB of address space) and of the other mappings.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';

const dir = process.env.BENCH_INSIDE_DIR;
/** A full collection on demand, to tell what is live from garbage not yet collected (a leak from a late collection). */
let collect;
if (dir) {
  v8.setFlagsFromString('--expose-gc');
  collect = vm.runInNewContext('gc');
}

/**
 * Resident KB of /proc/self/smaps by kind. A WebAssembly memory is a read-write anonymous mapping
 * followed by the inaccessible rest of its reservation (GBs of address space, ---p): counted as such.
 */
function mappings() {
  const kinds = { wasm: 0, file: 0, anonymous: 0 };
  let current;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      const start = BigInt(`0x${head[1]}`);
      const end = BigInt(`0x${head[2]}`);
      const reservation = head[3] === '---p' && end - start >= 2n ** 32n;
      const previous = current;
      if (reservation && previous && previous.end === start && previous.kind === 'anonymous' && previous.perms === 'rw-p') {
        kinds.anonymous -= previous.rss;
        kinds.wasm += previous.rss;
      }
      current = { end, perms: head[3], kind: head[5] && !head[5].startsWith('[') ? 'file' : 'anonymous', rss: 0 };
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && current) {
      current.rss = Number(rss[1]);
      kinds[current.kind] += current.rss;
    }
  }
  return kinds;
}

if (dir) {
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]));
    const memory = process.memoryUsage();
    // Only when the bench asks (its last reading): a collection lowers every reading after it.
    const live = existsSync(path.join(dir, 'collect')) ? (collect(), process.memoryUsage().heapUsed) : undefined;
    const report = { memory, live, heap: v8.getHeapStatistics(), spaces, mappingsKb: mappings() };
    writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(report));
  });
}
