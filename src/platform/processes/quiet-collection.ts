// One full garbage collection when the process falls quiet after work. V8 collects its old generation
// when it grows, not when the process goes idle: after a burst of answers the embedded service held
// 60-80 MB of garbage for minutes (resident memory 364 MB after 60 s of rest, 38 MB of its heap live),
// above what it takes at rest. Every CHECK_MS the event loop's utilization over the interval is read;
// after an interval of work (≥ BUSY) the first quiet one runs one collection, and no other until the
// process has worked again. Quiet is below QUIET, or near the least this process was seen to use in an
// earlier interval that was not work (REST_MARGIN times it, below BUSY): a process's rest is not the same
// on every machine (1-2% on one kind, 3-6% on another, where a fixed 3% never came). Nobody is being
// served in a quiet interval, so the pause (tens of ms) falls where it costs nothing (docs/decisions.md,
// "The service as deployed").
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

const CHECK_MS = 10_000;
/** An interval this busy or busier counts as work: a burst, a steady load, a large ingestion. */
const BUSY = 0.1;
/** Below this an interval counts as quiet whatever the process's rest: its timers and polls take 1-6%. */
const QUIET = 0.03;
/** Within this factor of the least utilization seen, an interval is the process's rest. */
const REST_MARGIN = 1.5;

/** What to do on each interval's utilization: collect after work, once a quiet spell. */
export function quietCollector(
  collect: () => void,
  limits = { busy: BUSY, quiet: QUIET, restMargin: REST_MARGIN },
): (utilization: number) => boolean {
  let worked = false;
  /** The least of the intervals before this one that were not work: the process's rest, once seen. */
  let rest = Infinity;
  return (utilization) => {
    if (utilization >= limits.busy) {
      worked = true;
      return false;
    }
    const quiet = utilization < limits.quiet || (rest < Infinity && utilization <= rest * limits.restMargin);
    rest = Math.min(rest, utilization);
    if (!quiet || !worked) return false;
    worked = false;
    collect();
    return true;
  };
}

/** Starts watching this process's event loop; the timer never keeps the process alive. Answers the stop. */
export function collectWhenQuiet(checkMs = CHECK_MS, collect: () => void = fullCollection()): () => void {
  const onInterval = quietCollector(collect);
  let previous = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    onInterval(performance.eventLoopUtilization(now, previous).utilization);
    previous = now;
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * V8's full collection, as `--expose-gc` offers it: exposed here rather than by a start flag, so no
 * dependency sees a global `gc`. It compacts the old generation (`--compact-on-every-full-gc` for this
 * one collection): a burst leaves its survivors spread over pages that a plain full collection keeps, and
 * the heap would stay committed at twice what is live.
 */
export function fullCollection(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  return () => {
    v8.setFlagsFromString('--compact-on-every-full-gc');
    try {
      gc();
    } finally {
      v8.setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}
