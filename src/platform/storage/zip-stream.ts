// A ZIP archive built as a stream: entries are read one after the other (a JSON document produced page
// by page, a stored file read from storage) and deflated as they go, so the archive never sits in
// memory whole; the bytes come out of an async iterator that storage.put consumes at its own pace.
import { Zip, ZipDeflate, ZipPassThrough } from 'fflate';

export interface ArchiveEntry {
  /** The name inside the archive (already unique). */
  name: string;
  /** Stored as is (original uploads, mostly compressed formats already) rather than deflated. */
  stored?: boolean;
  /** The entry's bytes, produced on demand when the archive reaches it. */
  body(): AsyncIterable<Uint8Array | string>;
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
    for await (const piece of entry.body()) {
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
