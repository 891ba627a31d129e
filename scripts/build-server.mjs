// Run by the start commands (npm start's prestart): compiles the service's TypeScript (src/, tests
// left out) into dist/ when the output is missing or older than any of its sources, so production runs
// plain JavaScript with no loader at run time. One file out per file in (no bundle): dist/ mirrors src/
// at the same depth, so paths a module finds beside itself (migrations, worker modules, web/dist) hold.
// The output is written beside dist/ and swapped in whole, so a process never starts from half of it.
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = path.join(root, 'src');
const OUTPUT = path.join(root, 'dist');
/** Written last: its time is the build's. */
const STAMP = '.built';
/** Every other file under src/ (migrations, the embed page's browser files, ...) travels with the code, as is. */
function isAsset(file) {
  return !file.endsWith('.ts');
}

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
    if (isCode(file) || isAsset(file)) latest = Math.max(latest, statSync(file).mtimeMs);
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
  const assets = [];
  walk(SOURCE, (file) => {
    if (isCode(file)) entryPoints.push(file);
    else if (isAsset(file)) assets.push(path.relative(SOURCE, file));
  });
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
  for (const asset of assets) {
    mkdirSync(path.dirname(path.join(staging, asset)), { recursive: true });
    cpSync(path.join(SOURCE, asset), path.join(staging, asset));
  }
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

/**
 * The embedded database's empty cluster, made once per installed PGlite (dist/platform/db/empty-cluster.js):
 * a new data folder starts as a copy of it instead of running PGlite's initdb. Not needed on a server.
 */
export async function ensureEmbeddedCluster() {
  const started = Date.now();
  try {
    const { ensureEmptyCluster } = await import(path.join(OUTPUT, 'platform', 'db', 'empty-cluster.js'));
    if (await ensureEmptyCluster()) console.log(`embedded database: made its empty cluster in ${Date.now() - started} ms (once per installed PGlite)`);
  } catch (error) {
    // E.g. node_modules not writable by the user who starts: the service runs without it.
    console.warn(`embedded database: no empty cluster (${error instanceof Error ? error.message : error}); a new data folder is made by PGlite's initdb`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await ensureServerBuilt();
  if (!process.env.DATABASE_URL) await ensureEmbeddedCluster();
}
