// What a service process reports to the bench per scenario: its event loop's delay, its CPU time, how
// busy its main thread was (over the scenario and in its busiest second) and the garbage collector's
// pauses. Near full busy, work queues behind work and every wait grows; a collection's pause at a busy
// peak holds every turn arriving then, and the queue behind it takes several times as long to drain.
import { constants, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';

export interface ProcessFigures {
  /** Event loop delay, ms. */
  p50: number;
  p99: number;
  max: number;
  /** CPU time of every thread (JavaScript, collection, compilation, the kernel's share), ms. */
  cpuMs: number;
  systemMs: number;
  /** Share of the time the main thread was busy: over the scenario, and in its busiest second. */
  busy: number;
  busiestSecond: number;
  gc: { minor: { count: number; longest: number }; major: { count: number; longest: number } };
}

export function watchProcess(): { reset(): void; report(): ProcessFigures } {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let cpuSince = process.cpuUsage();
  let busySince = performance.eventLoopUtilization();
  let busiestSecond = 0;
  let lastSecond = busySince;
  setInterval(() => {
    const now = performance.eventLoopUtilization();
    busiestSecond = Math.max(busiestSecond, performance.eventLoopUtilization(now, lastSecond).utilization);
    lastSecond = now;
  }, 1_000).unref();
  const emptyPauses = () => ({ minor: { count: 0, longest: 0 }, major: { count: 0, longest: 0 } });
  let pauses = emptyPauses();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      const bucket = kind === constants.NODE_PERFORMANCE_GC_MAJOR ? pauses.major : kind === constants.NODE_PERFORMANCE_GC_MINOR ? pauses.minor : undefined;
      if (!bucket) continue;
      bucket.count++;
      bucket.longest = Math.max(bucket.longest, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  return {
    reset() {
      pauses = emptyPauses();
      loop.reset();
      cpuSince = process.cpuUsage();
      busySince = performance.eventLoopUtilization();
      busiestSecond = 0;
    },
    report() {
      const cpu = process.cpuUsage(cpuSince);
      const busy = performance.eventLoopUtilization(busySince).utilization;
      return {
        p50: loop.percentile(50) / 1e6,
        p99: loop.percentile(99) / 1e6,
        max: loop.max / 1e6,
        cpuMs: (cpu.user + cpu.system) / 1e3,
        systemMs: cpu.system / 1e3,
        busy,
        busiestSecond: Math.max(busy, busiestSecond),
        gc: pauses,
      };
    },
  };
}

/** Several processes' figures: CPU summed; delays, busy shares and pauses of the worst process. */
export function combine(all: ProcessFigures[]): ProcessFigures {
  const max = (pick: (figures: ProcessFigures) => number) => Math.max(...all.map(pick));
  const sum = (pick: (figures: ProcessFigures) => number) => all.reduce((total, figures) => total + pick(figures), 0);
  return {
    p50: max((f) => f.p50),
    p99: max((f) => f.p99),
    max: max((f) => f.max),
    cpuMs: sum((f) => f.cpuMs),
    systemMs: sum((f) => f.systemMs),
    busy: max((f) => f.busy),
    busiestSecond: max((f) => f.busiestSecond),
    gc: {
      minor: { count: sum((f) => f.gc.minor.count), longest: max((f) => f.gc.minor.longest) },
      major: { count: sum((f) => f.gc.major.count), longest: max((f) => f.gc.major.longest) },
    },
  };
}
