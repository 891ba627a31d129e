// The process's database as its configuration says: the server's, or the embedded one in DATA_DIR (a new
// folder copied from the empty cluster when there is one: empty-cluster.ts), migrated,
// once the S3 bucket (when files go to one) is known usable: a start that cannot serve files writes nothing.
// Its own small module, so main.ts can start opening it before the rest of the service has loaded.
import type { Config, StartedConfig } from '../../config.js';
import { openDatabase, type DatabaseHandle } from './client.js';
import { emptyClusterPath } from './empty-cluster.js';

export async function openConfiguredDatabase(config: StartedConfig, onLost?: (error: Error) => void): Promise<DatabaseHandle> {
  if (config.filesS3) await checkBucket(config.filesS3);
  // The crash harness's stop of the embedded database's thread (FAULT_KILL_AT=database:<n>).
  const stopAfter = config.faultKillAt?.startsWith('database:') ? Number(config.faultKillAt.slice('database:'.length)) : undefined;
  const emptyCluster = config.databaseUrl ? undefined : emptyClusterPath();
  return openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, emptyCluster, onLost, stopAfter });
}

/** A bucket that cannot be used stops the process at start, before anything is opened, naming it. */
async function checkBucket(options: NonNullable<Config['filesS3']>): Promise<void> {
  const { createS3Storage } = await import('../storage/s3-storage.js');
  const store = createS3Storage(options);
  try {
    await store.check();
  } catch (error) {
    const where = options.endpoint ? ` at ${options.endpoint}` : '';
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new Error(`FILES_S3_BUCKET "${options.bucket}"${where} cannot be used (${reason})`);
  } finally {
    await store.close();
  }
}
