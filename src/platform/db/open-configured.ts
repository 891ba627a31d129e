// The process's database as its configuration says: the server's, or the embedded one in DATA_DIR, migrated.
// Its own small module, so main.ts can start opening it before the rest of the service has loaded.
import type { StartedConfig } from '../../config.js';
import { openDatabase, type DatabaseHandle } from './client.js';

export function openConfiguredDatabase(config: StartedConfig, onLost?: (error: Error) => void): Promise<DatabaseHandle> {
  // The crash harness's stop of the embedded database's thread (FAULT_KILL_AT=database:<n>).
  const stopAfter = config.faultKillAt?.startsWith('database:') ? Number(config.faultKillAt.slice('database:'.length)) : undefined;
  return openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, onLost, stopAfter });
}
