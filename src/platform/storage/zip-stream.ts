// A ZIP archive built as a stream: entries are read one after the other (a JSON document produced page
// by page, a stored file read from storage) and deflated as they go, so the archive never sits in
// memory whole; the bytes come out of an async iterator its reader (storage.put, an HTTP reply)
// consumes at its own pace. Used by a collection's download and the personal-data export.
import { Zip, ZipDeflate, ZipPassThrough } from 'fflate';

export interface ArchiveEntry {
  /** The name inside the archive (already unique). */
  name: string;
  /** Stored as is (original uploads, mostly compressed formats already) rather than deflated. */
  stored?: boolean;
  /** The entry's bytes, produced on demand when the archive reaches it. */
  body(): AsyncIterable<Uint8Array | string> | NodeJS.ReadableStream;
}

/** Names made unique inside an archive, case-insensitively: `a.txt`, `a (2).txt`, … */
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

const encoder = new TextEncoder();

export async function* zipEntries(entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  const pending: Uint8Array[] = [];
  let failure: Error | null = null;
  let finished = false;
  const zip = new Zip((error, data, final) => {
    if (error) failure = error;
    else pending.push(data);
    if (final) finished = true;
  });
  const drain = function* (): Generator<Uint8Array> {
    if (failure) throw failure;
    while (pending.length > 0) yield pending.shift()!;
  };

  for await (const entry of entries) {
    signal?.throwIfAborted();
    const file = entry.stored ? new ZipPassThrough(entry.name) : new ZipDeflate(entry.name, { level: 6 });
    zip.add(file);
    for await (const piece of entry.body() as AsyncIterable<Uint8Array | string>) {
      signal?.throwIfAborted();
      file.push(typeof piece === 'string' ? encoder.encode(piece) : piece);
      yield* drain();
    }
    file.push(new Uint8Array(0), true);
    yield* drain();
  }
  zip.end();
  yield* drain();
  if (!finished) throw new Error('ZIP stream ended early');
}

/** A JSON array written item by item from pages of items, so a long list is never one string. */
export async function* jsonArray<T>(pages: AsyncIterable<T[]>): AsyncGenerator<string> {
  let first = true;
  yield '[';
  for await (const page of pages) {
    if (page.length === 0) continue;
    const text = page.map((item) => `\n  ${JSON.stringify(item)}`).join(',');
    yield first ? text : `,${text}`;
    first = false;
  }
  yield first ? ']\n' : '\n]\n';
}
