// Run by the start commands (npm start's prestart): compiles the service's TypeScript (src/, tests
// left out) into dist/ when the output is missing or older than any of its sources, so production runs
// plain JavaScript with no loader at run time. One file out per file in (no bundle): dist/ mirrors src/
// at the same depth, so paths a module finds beside itself (migrations, worker modules, web/dist) hold.
// The output is written beside dist/ and swapped in whole, so a process never starts from half of it.
import { cpSync, existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = path.join(root, 'src');
const OUTPUT = path.join(root, 'dist');
/** Written last: its time is the build's. */
const STAMP = '.built';
/** Files that are not code but travel with it. */
const ASSETS = ['platform/db/migrations', 'modules/embed/browser'];

function isCode(file) {
  return file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.endsWith('.d.ts');
}

function walk(directory, visit) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const target = path.join(directory, entry.name);
    if (entry.isDirectory()) walk(target, visit);
    else visit(target);
  }
}

function newestSource() {
  let latest = statSync(fileURLToPath(import.meta.url)).mtimeMs;
  walk(SOURCE, (file) => {
    if (isCode(file) || ASSETS.some((asset) => file.startsWith(path.join(SOURCE, asset)))) latest = Math.max(latest, statSync(file).mtimeMs);
  });
  return latest;
}

export function needsServerBuild() {
  // An image that ships only dist/ (no sources) has nothing to compare with: it is built.
  if (!existsSync(SOURCE)) return false;
  const stamp = path.join(OUTPUT, STAMP);
  return !existsSync(stamp) || newestSource() > statSync(stamp).mtimeMs;
}

export async function buildServer() {
  const { build } = await import('esbuild');
  const entryPoints = [];
  walk(SOURCE, (file) => isCode(file) && entryPoints.push(file));
  const staging = `${OUTPUT}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  await build({
    entryPoints,
    outdir: staging,
    outbase: SOURCE,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  for (const asset of ASSETS) cpSync(path.join(SOURCE, asset), path.join(staging, asset), { recursive: true });
  writeFileSync(path.join(staging, STAMP), `${new Date().toISOString()}\n`);
  const previous = `${OUTPUT}.previous-${process.pid}`;
  if (existsSync(OUTPUT)) renameSync(OUTPUT, previous);
  renameSync(staging, OUTPUT);
  rmSync(previous, { recursive: true, force: true });
  return entryPoints.length;
}

export async function ensureServerBuilt() {
  if (!needsServerBuild()) return false;
  const started = Date.now();
  const files = await buildServer();
  console.log(`service: compiled ${files} files into dist/ in ${Date.now() - started} ms (missing or older than src/)`);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await ensureServerBuilt();
