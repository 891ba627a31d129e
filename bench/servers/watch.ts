// BENCH_WATCH=1: loaded into each service process (`--import`, before the entry) to report its event
// loop delay, busy share and GC pauses. Off by default, since it makes the service's start differ from
// `npm start`'s. On SIGUSR2 a process writes its figures since the last signal to
// $BENCH_WATCH_DIR/<pid>.json and starts counting again.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { watchProcess } from './process-figures.js';

const dir = process.env.BENCH_WATCH_DIR;
if (dir) {
  const watch = watchProcess();
  process.on('SIGUSR2', () => {
    writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(watch.report()));
    watch.reset();
  });
}
