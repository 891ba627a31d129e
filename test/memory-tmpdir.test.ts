import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testTmpdir } from './support/memory-tmpdir.js';

const roomy = mkdtempSync(path.join(os.tmpdir(), 'dt-tmpdir-'));
afterAll(() => rmSync(roomy, { recursive: true, force: true }));

describe("the run's temporary folder", () => {
  it('is TEST_TMPDIR when it is set, whatever the memory folder', () => {
    expect(testTmpdir({ TEST_TMPDIR: '/somewhere/else' }, roomy)).toBe('/somewhere/else');
  });

  it('is the memory folder when it is writable and has room', () => {
    expect(testTmpdir({}, roomy)).toBe(roomy);
  });

  it("is the system's when there is no memory folder", () => {
    expect(testTmpdir({}, path.join(roomy, 'missing'))).toBeUndefined();
  });

  it('is the one the run uses: os.tmpdir() in a test file', () => {
    const expected = testTmpdir({ TEST_TMPDIR: process.env.TEST_TMPDIR });
    if (expected) expect(os.tmpdir()).toBe(expected);
    else expect(os.tmpdir()).not.toBe('/dev/shm');
  });
});
