// The embedded database's empty cluster, made once per installed PGlite (as a PostgreSQL package's
// install makes its cluster) and copied into a new data folder at its first start, which then runs every
// migration as before. PGlite's own initdb was most of a fresh folder's start: 3.4-4 s and ~5.6 s of CPU
// here, against ~0.1 s for the copy (docs/decisions.md, "The service as deployed").
// Made by the start command's prestart (scripts/build-server.mjs) in node_modules/.cache; without it, a new
// folder is made by PGlite's initdb at start, as before.
import { constants, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, rmdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** PostgreSQL writes this file last in initdb; a folder without it is not a cluster. */
const CLUSTER_MARK = 'PG_VERSION';
const PREFIX = 'pglite-cluster-';

/** node_modules/.cache/digital-twin/pglite-cluster-<PGlite's version>: another version, another cluster. */
export function emptyClusterPath(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const packageDir = entry.slice(0, entry.lastIndexOf(`${path.sep}dist${path.sep}`));
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const nodeModules = path.dirname(path.dirname(packageDir));
  return path.join(nodeModules, '.cache', 'digital-twin', `${PREFIX}${version}`);
}

export function isCluster(folder: string): boolean {
  return existsSync(path.join(folder, CLUSTER_MARK));
}

/**
 * Makes the empty cluster when missing (PGlite's initdb, then a clean close), in a staging folder moved
 * in whole, so a stopped build leaves no half cluster. Clusters of other PGlite versions are removed.
 * Returns whether it made one.
 */
export async function ensureEmptyCluster(target = emptyClusterPath()): Promise<boolean> {
  if (isCluster(target)) return false;
  const { PGlite } = await import('@electric-sql/pglite');
  const staging = `${target}.making-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(path.dirname(target), { recursive: true });
  const database = new PGlite(staging);
  await database.waitReady;
  await database.close();
  // Another build or test run may have made it meanwhile: theirs is kept (a start may be copying it).
  let made = false;
  if (!isCluster(target)) {
    rmSync(target, { recursive: true, force: true }); // a folder there that is not a cluster
    try {
      renameSync(staging, target);
      made = true;
    } catch (error) {
      if (!isCluster(target)) throw error;
    }
  }
  if (!made) rmSync(staging, { recursive: true, force: true });
  removeOtherClusters(target);
  return made;
}

/** The clusters of other PGlite versions beside `target` (not one another build is making). */
export function removeOtherClusters(target: string): void {
  const parent = path.dirname(target);
  for (const entry of readdirSync(parent)) {
    if (entry.startsWith(PREFIX) && path.join(parent, entry) !== target && !entry.includes('.making-')) {
      rmSync(path.join(parent, entry), { recursive: true, force: true });
    }
  }
}

/**
 * Copies the empty cluster into a data folder that does not exist yet or is empty; a folder with anything
 * in it is left to PGlite as it is. The copy is made beside the folder and renamed into place, so a
 * start stopped midway leaves no half cluster. Returns whether it copied.
 */
export function seedFromEmptyCluster(dataDir: string, cluster: string): boolean {
  if (!isCluster(cluster)) return false;
  if (existsSync(dataDir)) {
    if (readdirSync(dataDir).length > 0) return false;
    rmdirSync(dataDir);
  }
  // One start at a time opens a data folder: a copy a stopped start left here is replaced.
  const staging = `${dataDir}.seeding`;
  rmSync(staging, { recursive: true, force: true });
  // A copy-on-write clone where the file system has them, a plain copy elsewhere.
  cpSync(cluster, staging, { recursive: true, mode: constants.COPYFILE_FICLONE });
  renameSync(staging, dataDir);
  return true;
}
