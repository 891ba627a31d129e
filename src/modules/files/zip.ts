// A streamed ZIP of stored files: each file is read from storage and deflated as it goes, so a
// large collection never sits in memory. Names inside the archive are made unique.
import { Readable } from 'node:stream';
import { Zip, ZipDeflate } from 'fflate';
import type { FileStorage } from '../../platform/storage/storage.js';

export interface ZipEntry {
  name: string;
  storageKey: string;
}

export function uniqueNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const count = seen.get(name.toLowerCase()) ?? 0;
    seen.set(name.toLowerCase(), count + 1);
    if (count === 0) return name;
    const dot = name.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    return `${stem} (${count + 1})${ext}`;
  });
}

export function zipStream(storage: FileStorage, entries: ZipEntry[]): Readable {
  const names = uniqueNames(entries.map((entry) => entry.name));
  const pending: Uint8Array[] = [];
  let failure: Error | null = null;
  let finished = false;
  const zip = new Zip((error, data, final) => {
    if (error) failure = error;
    else pending.push(data);
    if (final) finished = true;
  });

  async function* generate(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < entries.length; i += 1) {
      const file = new ZipDeflate(names[i], { level: 6 });
      zip.add(file);
      for await (const chunk of storage.get(entries[i].storageKey)) {
        file.push(chunk as Uint8Array);
        if (failure) throw failure;
        while (pending.length) yield pending.shift()!;
      }
      file.push(new Uint8Array(0), true);
      while (pending.length) yield pending.shift()!;
    }
    zip.end();
    if (failure) throw failure;
    while (pending.length) yield pending.shift()!;
    if (!finished) throw new Error('ZIP stream ended early');
  }

  return Readable.from(generate(), { objectMode: false });
}
