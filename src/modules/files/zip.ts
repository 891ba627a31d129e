// A collection's ZIP download: each stored file read from storage and deflated as it goes
// (platform/storage/zip-stream.ts), so a large collection never sits in memory.
import { Readable } from 'node:stream';
import type { FileStorage } from '../../platform/storage/storage.js';
import { uniqueNames, zipEntries } from '../../platform/storage/zip-stream.js';

export interface ZipEntry {
  name: string;
  storageKey: string;
}

export function zipStream(storage: FileStorage, entries: ZipEntry[]): Readable {
  const names = uniqueNames(entries.map((entry) => entry.name));
  const archived = entries.map((entry, i) => ({ name: names[i], body: () => storage.get(entry.storageKey) }));
  return Readable.from(zipEntries(archived), { objectMode: false });
}
