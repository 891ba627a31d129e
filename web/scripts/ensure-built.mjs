// Run by the start command (npm start's prestart) and the browser tests: builds the web client into
// web/dist when the bundle is missing or older than any of its sources, installing web/'s dependencies
// from its lockfile first when they are missing. Plain Node, no dependencies of its own.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const web = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The service's permission list is part of the console's bundle (web/src/admin/Memberships.tsx).
const SOURCES = ['src', 'public', 'scripts', 'index.html', 'vite.config.ts', 'tsconfig.json', 'package.json', 'package-lock.json', '../src/platform/http/permissions.ts'];
const GENERATED = new Set(['schema.json', 'schema.d.ts']);

function newest(target) {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return GENERATED.has(path.basename(target)) ? 0 : stat.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(target)) latest = Math.max(latest, newest(path.join(target, entry)));
  return latest;
}

export function builtAt() {
  const index = path.join(web, 'dist', 'index.html');
  return existsSync(index) ? statSync(index).mtimeMs : 0;
}

export function needsBuild() {
  const built = builtAt();
  return built === 0 || SOURCES.some((source) => newest(path.join(web, source)) > built);
}

function run(args, env = process.env) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, args, { cwd: web, stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(`web client: npm ${args.join(' ')} failed`);
    process.exit(result.status ?? 1);
  }
}

export function ensureBuilt() {
  if (!needsBuild()) return false;
  if (!existsSync(path.join(web, 'node_modules', '.package-lock.json'))) run(['ci', '--no-audit', '--no-fund']);
  console.log('web client: building web/dist (its bundle is missing or older than its sources)');
  // Vite keeps a NODE_ENV it finds (vitest sets 'test'), which would ship React's development build.
  run(['run', 'build'], { ...process.env, NODE_ENV: 'production' });
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) ensureBuilt();
