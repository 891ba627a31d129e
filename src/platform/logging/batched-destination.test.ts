// The log's destination as a reader of the service's stdout sees it: lines in order, written once a
// batch is full or the flush interval passes, none lost when the process exits (normally or on an
// uncaught exception), and every line whole and in order when several processes write to one pipe whose
// reader falls behind (an API process group's stdout).
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, closeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatchedDestination, type LogDestination } from './batched-destination.js';

const MODULE = path.resolve('src/platform/logging/batched-destination.ts');
let dir: string | undefined;
let destination: LogDestination | undefined;

afterEach(() => {
  destination?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = destination = undefined;
});

function tempFile(): { file: string; fd: number } {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dt-logdest-'));
  const file = path.join(dir, 'log');
  return { file, fd: openSync(file, 'a') };
}

/** Runs `body` in a child process whose stdout is the destination's descriptor; resolves with what it printed. */
function child(body: string, copies = 1, slowReader = false): Promise<{ out: string; codes: Array<number | null> }> {
  const script = `import { createBatchedDestination } from ${JSON.stringify(MODULE)};\n${body}`;
  return new Promise((resolve, reject) => {
    // One pipe shared by every copy, as the processes of an API group share the primary's stdout.
    const runner = spawn(
      process.execPath,
      [
        '-e',
        `const { spawn } = require('node:child_process');
         let left = ${copies}; const codes = [];
         for (let i = 0; i < ${copies}; i++) spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', ${JSON.stringify(script)}], { stdio: ['ignore', 'inherit', 'inherit'] })
           .on('exit', (code) => { codes.push(code); if (--left === 0) console.error(JSON.stringify(codes)); });`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    runner.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      // A reader that falls behind: the pipe fills and the writers wait inside their writes.
      if (slowReader) {
        runner.stdout.pause();
        setTimeout(() => runner.stdout.resume(), 2);
      }
    });
    runner.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    runner.on('error', reject);
    runner.on('exit', () => {
      const last = err.trim().split('\n').pop() ?? '[]';
      try {
        resolve({ out, codes: JSON.parse(last) as Array<number | null> });
      } catch {
        reject(new Error(`child failed: ${err}`));
      }
    });
  });
}

describe('the batched log destination', () => {
  it('writes lines in order once a batch is full, and the rest within the flush interval, also after a quiet spell', async () => {
    const { file, fd } = tempFile();
    destination = createBatchedDestination(fd, { batchBytes: 100, flushMs: 50 });
    destination.write('{"n":1}\n');
    destination.write('{"n":2}\n');
    expect(statSync(file).size).toBe(0); // a batch is not full yet
    for (let n = 3; n <= 20; n++) destination.write(`{"n":${n}}\n`);
    const afterFull = readFileSync(file, 'utf8');
    expect(afterFull.length).toBeGreaterThanOrEqual(100);
    destination.write('{"n":21}\n');
    // A line longer than a whole batch goes out on its own, after what was pending and before what follows.
    destination.write(`{"n":22,"long":"${'ü'.repeat(120)}"}\n`);
    destination.write('{"n":23}\n');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    expect(lines.map((line) => (JSON.parse(line) as { n: number }).n)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    expect((JSON.parse(lines[21]!) as { long: string }).long).toBe('ü'.repeat(120));
    // A line after a quiet spell (no timer armed while nothing is pending) goes out within the interval too.
    destination.write('{"n":24}\n');
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(23);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean).at(-1)).toBe('{"n":24}');
    closeSync(fd);
  });

  it('writes what is pending when the process exits, also on an uncaught exception', async () => {
    const quiet = 'const d = createBatchedDestination(1, { batchBytes: 1e6, flushMs: 1e6 });';
    const normal = await child(`${quiet} d.write('one\\n'); d.write('two\\n'); process.exit(0);`);
    expect(normal).toEqual({ out: 'one\ntwo\n', codes: [0] });
    const thrown = await child(`${quiet} d.write('before the crash\\n'); setTimeout(() => { throw new Error('boom'); }, 10);`);
    expect(thrown.out).toBe('before the crash\n');
    expect(thrown.codes).toEqual([1]);
  });

  it('keeps every line of processes sharing one pipe whole and in order while the reader falls behind', async () => {
    // Lines of ~370 bytes with multi-byte text, in batches larger than a pipe's buffer page.
    const body = `const d = createBatchedDestination(1, { batchBytes: 20_000, flushMs: 5 });
      const pad = 'é'.repeat(120);
      let i = 0;
      // Spread over half a second, so that the processes write at the same time.
      const tick = setInterval(() => {
        for (let n = 0; n < 60 && i < 3000; n++, i++) d.write(JSON.stringify({ pid: process.pid, i, pad }) + '\\n');
        if (i === 3000) { clearInterval(tick); d.close(); }
      }, 10);`;
    const { out, codes } = await child(body, 3, true);
    expect(codes).toEqual([0, 0, 0]);
    const lines = out.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { pid: number; i: number });
    expect(lines).toHaveLength(9000);
    const byProcess = new Map<number, number[]>();
    for (const line of lines) byProcess.set(line.pid, [...(byProcess.get(line.pid) ?? []), line.i]);
    expect([...byProcess.values()].map((seen) => seen.join(','))).toEqual(Array(3).fill(Array.from({ length: 3000 }, (_, i) => i).join(',')));
  }, 30_000);
});
