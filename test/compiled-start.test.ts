// Production runs compiled JavaScript: `npm start` runs node on dist/ (built by its prestart when
// missing or stale, scripts/build-server.mjs), with no TypeScript loader. Shown here: the start
// commands name dist/main.js and no loader; the output holds a bundle for each module a process or thread
// starts from, whose every import of ours is a file of the output, and every other file of src/;
// and that output alone (no src/, as the image ships it) starts on a fresh data folder, creates the first
// administrator and answers them.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENTRIES, needsServerBuild } from '../scripts/build-server.mjs';
import { startProcess, stopProcess, type ServiceProcess } from './support/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

function files(directory: string, base = directory): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const target = path.join(directory, entry.name);
    return entry.isDirectory() ? files(target, base) : [path.relative(base, target)];
  });
}

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('the compiled service', () => {
  it('is what the start commands run: node on dist/main.js, no TypeScript loader, built first by their prestart', () => {
    for (const name of ['start', 'start:api', 'start:worker']) {
      expect(scripts[name], name).toMatch(/^node (--[\w-]+(=\S+)? )*dist\/main\.js( \w+)?$/);
      expect(scripts[name], name).not.toMatch(/tsx|--import|--loader|\.ts\b/);
      expect(scripts[`pre${name}`], `pre${name}`).toContain('node scripts/build-server.mjs');
    }
    expect(scripts.dev).toContain('tsx watch src/main.ts');
  });

  it('holds a bundle for every entry, each import of ours a file beside it, every other file of src/ as is, and is not older than its sources', () => {
    const built = new Set(files(path.join(ROOT, 'dist')));
    expect(ENTRIES.map((entry) => entry.replace(/\.ts$/, '.js')).filter((file) => !built.has(file))).toEqual([]);
    const assets = files(path.join(ROOT, 'src')).filter((file) => !file.endsWith('.ts'));
    // Our code is the bundles and what main.js loads lazily (lazy-*.js beside it), not a module a source file.
    const code = [...built].filter((file) => file.endsWith('.js') && !assets.includes(file));
    expect(code.filter((file) => !ENTRIES.includes(file.replace(/\.js$/, '.ts')) && !/^lazy-[\w-]+\.js$/.test(file))).toEqual([]);
    for (const file of code) {
      const text = readFileSync(path.join(ROOT, 'dist', file), 'utf8');
      for (const [, target] of text.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)) {
        expect(built.has(path.join(path.dirname(file), target!)), `${file} imports ${target}`).toBe(true);
      }
    }
    // Every other file travels as is: the migrations, the embed page's browser files.
    expect(assets.filter((file) => file.startsWith('platform/db/migrations/')).length).toBeGreaterThan(0);
    expect(assets.filter((file) => !built.has(file))).toEqual([]);
    expect(needsServerBuild()).toBe(false);
    expect(statSync(path.join(ROOT, 'dist/.built')).mtimeMs).toBeGreaterThan(0);
  });

  it('starts from its output alone, as the image ships it, and answers its first administrator', { timeout: 180_000 }, async () => {
    const app = mkdtempSync(path.join(os.tmpdir(), 'dt-compiled-'));
    cleanups.push(() => rmSync(app, { recursive: true, force: true }));
    cpSync(path.join(ROOT, 'dist'), path.join(app, 'dist'), { recursive: true });
    cpSync(path.join(ROOT, 'package.json'), path.join(app, 'package.json'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));
    expect(existsSync(path.join(app, 'src'))).toBe(false);

    const admin = { email: 'root@example.test', password: 'a long admin password' };
    // Modules resolve from the entry's own folder: dist/ and node_modules/ of the copy, nothing else.
    const service = await startProcess(path.join(app, 'dist/main.js'), [], {
      DATA_DIR: path.join(app, 'data'),
      DATABASE_URL: '',
      REDIS_URL: '',
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
    });
    cleanups.push(() => stopProcess(service));
    const health = await fetch(`${service.url}/api/test`).then((response) => response.json());
    expect(health).toMatchObject({ success: true, status: 'ok', database: 'pglite' });
    const signedIn = await fetch(`${service.url}/api/auth/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(admin),
    });
    expect(signedIn.status).toBe(200);
    expect(((await signedIn.json()) as { profile: { email: string } }).profile.email).toBe(admin.email);
  });
});
