// A new data folder starts as a copy of the empty cluster (made by the test run's setup, as the start
// command's prestart makes it): the copy lands whole or not at all, a folder with anything in it is never
// touched, and the copied cluster migrates, keeps what is written and opens again.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './client.js';
import { emptyClusterPath, ensureEmptyCluster, isCluster, removeOtherClusters, seedFromEmptyCluster } from './empty-cluster.js';
import { PGLITE_WORKER } from '../../../test/support/database.js';
import { insertTwin } from '../../modules/twins/twins.repo.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'dt-cluster-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const cluster = emptyClusterPath();
// The embedded database's own tests: the server pass (TEST_DATABASE_URL) would run the same PGlite code again.
const SERVER_PASS = Boolean(process.env.TEST_DATABASE_URL);

describe.skipIf(SERVER_PASS)('the empty cluster', () => {
  it('is made once for the installed PGlite, under its version', async () => {
    const version = JSON.parse(readFileSync(path.join('node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')).version;
    expect(path.basename(cluster)).toBe(`pglite-cluster-${version}`);
    expect(isCluster(cluster)).toBe(true);
    expect(await ensureEmptyCluster(cluster)).toBe(false);
  });

  it('keeps the cluster another run made meanwhile, and leaves no staging folder of its own', async () => {
    const target = path.join(root, 'raced', 'pglite-cluster-test');
    mkdirSync(path.dirname(target), { recursive: true });
    const making = ensureEmptyCluster(target); // runs PGlite's initdb for a few seconds
    seedFromEmptyCluster(target, cluster); // meanwhile "another run" finishes first
    writeFileSync(path.join(target, 'theirs'), '');
    expect(await making).toBe(false);
    expect(existsSync(path.join(target, 'theirs'))).toBe(true);
    expect(readdirSync(path.dirname(target))).toEqual(['pglite-cluster-test']);
  });

  it("once made, leaves no other version's cluster beside it, but never one another build is making", () => {
    const cache = path.join(root, 'cache');
    for (const name of ['pglite-cluster-0.5.14', 'pglite-cluster-0.4.1', 'pglite-cluster-0.6.0.making-4242', 'other']) mkdirSync(path.join(cache, name), { recursive: true });
    removeOtherClusters(path.join(cache, 'pglite-cluster-0.5.14'));
    expect(readdirSync(cache).sort()).toEqual(['other', 'pglite-cluster-0.5.14', 'pglite-cluster-0.6.0.making-4242']);
  });

  it('is copied into a folder that does not exist yet, or is empty, with nothing left beside it', () => {
    const missing = path.join(root, 'missing', 'pglite');
    mkdirSync(path.dirname(missing));
    expect(seedFromEmptyCluster(missing, cluster)).toBe(true);
    expect(readdirSync(missing).sort()).toEqual(readdirSync(cluster).sort());
    expect(readdirSync(path.dirname(missing))).toEqual(['pglite']);

    const empty = path.join(root, 'empty');
    mkdirSync(empty);
    expect(seedFromEmptyCluster(empty, cluster)).toBe(true);
    expect(isCluster(empty)).toBe(true);
  });

  it('never touches a folder that holds anything, and copies nothing from a folder that is not a cluster', () => {
    const used = path.join(root, 'used');
    mkdirSync(used);
    writeFileSync(path.join(used, 'notes.txt'), 'mine');
    expect(seedFromEmptyCluster(used, cluster)).toBe(false);
    expect(readdirSync(used)).toEqual(['notes.txt']);

    const notCluster = path.join(root, 'not-a-cluster');
    mkdirSync(notCluster);
    const target = path.join(root, 'from-nothing');
    expect(seedFromEmptyCluster(target, notCluster)).toBe(false);
    expect(existsSync(target)).toBe(false);
  });

  it('migrates when copied into a new data folder, keeps what is written, and opens again', async () => {
    const dataDir = path.join(root, 'data');
    const first = await openDatabase({ dataDir, emptyCluster: cluster, pgliteWorker: PGLITE_WORKER });
    await insertTwin(first.db, { name: 'Seeded Twin', ainame: 'Twin' });
    await first.close();
    expect(isCluster(path.join(dataDir, 'pglite'))).toBe(true);

    const again = await openDatabase({ dataDir, emptyCluster: cluster, pgliteWorker: PGLITE_WORKER });
    const { rows } = await again.executeSql(`select name from institutions`);
    await again.close();
    expect(rows).toEqual([{ name: 'Seeded Twin' }]);
  });
});
