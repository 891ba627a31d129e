// Run by the start commands (npm start's prestart): compiles the service's TypeScript (src/, tests
// left out) into dist/ when the output is missing or older than any of its sources, so production runs
// plain JavaScript with no loader at run time. Each module a process or thread starts from (ENTRIES) is
// bundled with everything of src/ it imports into one file at its own place (dist/ mirrors src/: main.js,
// platform/db/pglite-worker.js, ...; what main.js imports lazily, in `lazy-*.js` beside it); packages stay
// in node_modules. A start then reads and links a few files of ours instead of hundreds
// (docs/decisions.md, "The service as deployed"). A module that finds a
// file beside itself (`import.meta.url`, `import.meta.dirname`: the migrations, the worker modules, the
// embed page's files) is told its own place under dist/, not the bundle's, so those paths hold as in src/.
// The output is written beside dist/ and swapped in whole, so a process never starts from half of it.
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
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

/** What a process or a thread starts from: the entry, the database thread, the CPU pool's worker and its tasks, the prestart's cluster maker. */
export const ENTRIES = ['main.ts', 'platform/db/pglite-worker.ts', 'platform/db/empty-cluster.ts', 'platform/workers/cpu-worker.ts', 'modules/files/cpu-tasks.ts'];

/**
 * Rewrites `import.meta.url` and `import.meta.dirname` in each module of one bundle into the module's own
 * place under dist/, from the bundle's (whose `import.meta` is the only one at run time).
 */
function ownPlace(bundleDir) {
  return {
    name: 'own-place',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async ({ path: file }) => {
        const contents = await readFile(file, 'utf8');
        if (!contents.includes('import.meta.')) return { contents, loader: 'ts' };
        const built = path.join(OUTPUT, path.relative(SOURCE, file)).replace(/\.ts$/, '.js');
        const relative = (target) => `./${path.relative(bundleDir, target).split(path.sep).join('/')}`;
        return {
          loader: 'ts',
          contents: contents
            .replaceAll('import.meta.url', `new URL(${JSON.stringify(relative(built))}, import.meta.url).href`)
            .replaceAll('import.meta.dirname', `__serviceBesideBundle(${JSON.stringify(relative(path.dirname(built)))}, import.meta.dirname)`),
        };
      });
    },
  };
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
  for (const entry of ENTRIES) {
    const bundleDir = path.dirname(path.join(OUTPUT, entry));
    // The entry's own lazy imports stay lazy: what main.ts loads after it listens is in files beside it
    // (`lazy-*.js`, in its folder, so the places above hold for them too), read when first imported.
    const lazy = entry === 'main.ts';
    await build({
      entryPoints: [path.join(SOURCE, entry)],
      ...(lazy
        ? { outdir: path.join(staging, path.dirname(entry)), splitting: true, chunkNames: 'lazy-[name]-[hash]' }
        : { outfile: path.join(staging, entry.replace(/\.ts$/, '.js')) }),
      bundle: true,
      packages: 'external',
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'warning',
      plugins: [ownPlace(bundleDir)],
      // The one helper the rewritten `import.meta.dirname` needs: the bundle's folder joined with a relative path.
      banner: { js: "import { join as __serviceJoinPath } from 'node:path'; const __serviceBesideBundle = (relative, dir) => __serviceJoinPath(dir, relative);" },
    });
  }
  for (const asset of assets) {
    mkdirSync(path.dirname(path.join(staging, asset)), { recursive: true });
    cpSync(path.join(SOURCE, asset), path.join(staging, asset));
  }
  writeFileSync(path.join(staging, STAMP), `${new Date().toISOString()}\n`);
  const previous = `${OUTPUT}.previous-${process.pid}`;
  if (existsSync(OUTPUT)) renameSync(OUTPUT, previous);
  renameSync(staging, OUTPUT);
  rmSync(previous, { recursive: true, force: true });
  return { entries: ENTRIES.length, sources: entryPoints.length };
}

export async function ensureServerBuilt() {
  if (!needsServerBuild()) return false;
  const started = Date.now();
  const { entries, sources } = await buildServer();
  console.log(`service: compiled ${sources} files into ${entries} bundles in dist/ in ${Date.now() - started} ms (missing or older than src/)`);
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
