// The collection when a process falls quiet: after an interval of work the first quiet one collects,
// once; rest alone never collects; and on the real event loop it frees what a burst left behind.
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectWhenQuiet, fullCollection, quietCollector } from './quiet-collection.js';

describe('quietCollector', () => {
  const limits = { busy: 0.1, quiet: 0.03, restMargin: 1.5 };
  const counted = () => {
    const counter = { calls: 0, collect: () => void counter.calls++ };
    return counter;
  };

  it('never collects while the process only rests', () => {
    const counter = counted();
    const onInterval = quietCollector(counter.collect, limits);
    for (const utilization of [0, 0.01, 0.02, 0.029, 0.05, 0.09, 0.01]) expect(onInterval(utilization)).toBe(false);
    expect(counter.calls).toBe(0);
  });

  it("counts as quiet a rest above 3% on a machine where that is the process's rest, and no more", () => {
    const counter = counted();
    const onInterval = quietCollector(counter.collect, limits);
    // A start, then the process's own rest at 4-5%: the least seen is 4.2%, so rest is up to 6.3%.
    for (const utilization of [0.15, 0.1, 0.046, 0.042, 0.05]) onInterval(utilization);
    expect(counter.calls).toBe(1); // the start's work, then its rest
    expect(onInterval(0.52)).toBe(false); // a burst
    expect(onInterval(0.068)).toBe(false); // winding down: above the rest's margin
    expect(onInterval(0.054)).toBe(true);
    expect(counter.calls).toBe(2);
    // Light work that never falls to the rest is not a quiet spell.
    expect(onInterval(0.3)).toBe(false);
    for (const utilization of [0.08, 0.07, 0.09, 0.065]) expect(onInterval(utilization)).toBe(false);
    expect(counter.calls).toBe(2);
  });

  it('collects once at the first quiet interval after work, and again only after more work', () => {
    const counter = counted();
    const onInterval = quietCollector(counter.collect, limits);
    expect(onInterval(0.6)).toBe(false); // a burst
    expect(onInterval(0.05)).toBe(false); // winding down: neither work nor quiet
    expect(onInterval(0.01)).toBe(true);
    expect(counter.calls).toBe(1);
    expect(onInterval(0.01)).toBe(false);
    expect(onInterval(0)).toBe(false);
    expect(counter.calls).toBe(1);
    expect(onInterval(0.1)).toBe(false); // exactly busy counts as work
    expect(onInterval(0.02)).toBe(true);
    expect(counter.calls).toBe(2);
  });
});

describe('fullCollection', () => {
  it('gives back the pages a burst left its few survivors spread over', () => {
    const collect = fullCollection();
    const plain = vm.runInNewContext('gc') as () => void;
    // One object in three lives on, between two that die: every old page keeps a few live objects.
    const live: Array<{ n: number; text: string }> = [];
    let dying: Array<{ n: number; text: string }> | undefined = [];
    for (let n = 0; n < 600_000; n++) (n % 3 === 0 ? live : dying).push({ n, text: `${'y'.repeat(40)}${n}` });
    plain();
    dying = undefined;
    plain();
    const afterPlain = process.memoryUsage();
    collect();
    const afterCompacting = process.memoryUsage();
    expect(live.length).toBe(200_000);
    expect(afterCompacting.heapUsed).toBeLessThanOrEqual(afterPlain.heapUsed + 1e6);
    expect(afterPlain.heapTotal - afterCompacting.heapTotal).toBeGreaterThan(20e6);
  });
});

describe('collectWhenQuiet on the real event loop', () => {
  it('frees the garbage a busy interval left once the loop is quiet', async () => {
    const gc = fullCollection();
    let calls = 0;
    gc();
    const before = process.memoryUsage().heapUsed;
    // Objects that live through a collection (so they sit in the old generation), then dropped: garbage
    // V8 does not collect by itself while the process allocates nothing.
    let held: Array<{ n: number; text: string }> | undefined = Array.from({ length: 200_000 }, (_, n) => ({ n, text: `${'x'.repeat(100)}${n}` }));
    gc();
    expect(held.length).toBe(200_000);
    held = undefined;
    const withGarbage = process.memoryUsage().heapUsed;
    expect(withGarbage - before).toBeGreaterThan(20e6);

    const stop = collectWhenQuiet(40, () => {
      calls++;
      gc();
    });
    try {
      const end = performance.now() + 60; // work: a whole interval of the loop held
      while (performance.now() < end);
      const deadline = Date.now() + 5_000;
      while (calls === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      stop();
    }
    expect(calls).toBe(1);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(10e6);
  });
});
