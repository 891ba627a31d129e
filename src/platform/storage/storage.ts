// Blob storage for uploaded files under one root folder (DATA_DIR/files), the embedded shape's store;
// the scaled shape's is an S3-compatible object store (s3-storage.ts), behind the same interface.
// Keys are made by the service (newStorageKey), never from a user's file name, and are validated
// again here so a bad key cannot escape the root; writes are atomic (temp file, then rename).
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { newId } from '../ids/ids.js';

export type StorageBody = Buffer | NodeJS.ReadableStream | AsyncIterable<Uint8Array>;

export interface FileStorage {
  /** Stores the body under key, replacing any previous file; the key never holds a partial file. */
  put(key: string, body: StorageBody): Promise<{ size: number }>;
  /** A stream of the file; a missing key surfaces as an ENOENT 'error' event on the stream. */
  get(key: string): Readable;
  read(key: string): Promise<Buffer>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Releases connections (the object store's client); the local store has none. */
  close?(): Promise<void>;
  /**
   * Deletes the unfinished writes of processes that are gone (killed mid-write: a rename never came);
   * `gone` answers which writer ids belong to them. Only a store whose unfinished writes outlive their
   * process has it: the local one (an S3 upload shows nothing until it completes).
   */
  removeAbandonedWrites?(gone: (writerIds: string[]) => Promise<Set<string>>): Promise<number>;
}

// Segments are lowercase, digits, '_' and '-', separated by single '/'; no empty segment and no
// dot at all, which rules out '..', hidden files and clashes with our '.tmp' files.
const KEY_PATTERN = /^[a-z0-9_-]+(?:\/[a-z0-9_-]+)*$/;
const MAX_KEY_LENGTH = 512;

export function assertValidKey(key: string): void {
  if (typeof key !== 'string' || key.length > MAX_KEY_LENGTH || !KEY_PATTERN.test(key)) {
    throw new Error(`Invalid storage key: ${JSON.stringify(key)}`);
  }
}

/** e.g. `avatars/2026/11/<24-hex>`: year/month spreads files over folders and helps cleanup by age. */
export function newStorageKey(prefix?: string): string {
  const now = new Date();
  const year = String(now.getUTCFullYear());
  const month = String(now.getUTCMonth() + 1).padStart(2, '0');
  const key = [prefix, year, month, newId()].filter((part) => part !== undefined && part !== '').join('/');
  assertValidKey(key);
  return key;
}

/** Where a process's writes in progress live (a key has no dot, so no key can reach it). */
const PARTIAL_DIR = '.partial';

export interface LocalStorageOptions {
  /** The writing process's id (its liveness id): its unfinished writes are kept under `.partial/<id>`. */
  writerId?: string;
}

export interface LocalFileStorage extends FileStorage {
  removeAbandonedWrites(gone: (writerIds: string[]) => Promise<Set<string>>): Promise<number>;
}

export function createLocalStorage(rootDir: string, options: LocalStorageOptions = {}): LocalFileStorage {
  const root = path.resolve(rootDir);
  const partialRoot = path.join(root, PARTIAL_DIR);
  const writerId = options.writerId ?? 'local';
  if (!/^[a-z0-9_-]+$/.test(writerId)) throw new Error(`Invalid writer id: ${JSON.stringify(writerId)}`);

  function pathFor(key: string): string {
    assertValidKey(key);
    const full = path.join(root, ...key.split('/'));
    // Belt and braces: the pattern already forbids escaping, but a path check costs nothing.
    if (!full.startsWith(root + path.sep)) throw new Error(`Invalid storage key: ${JSON.stringify(key)}`);
    return full;
  }

  return {
    async put(key, body) {
      const target = pathFor(key);
      await mkdir(path.dirname(target), { recursive: true });
      // Under the root, so rename stays on one filesystem and is atomic; in the writer's own folder, so
      // the write of a process killed before its rename is found and removed (removeAbandonedWrites).
      const writerDir = path.join(partialRoot, writerId);
      await mkdir(writerDir, { recursive: true });
      const temp = path.join(writerDir, `${randomBytes(8).toString('hex')}.tmp`);
      let stream: WriteStream | undefined;
      try {
        // flush: fsync before rename, so a power cut cannot leave an empty file under the key.
        if (Buffer.isBuffer(body)) {
          await writeFile(temp, body, { flag: 'wx', flush: true });
        } else {
          stream = createWriteStream(temp, { flags: 'wx', flush: true });
          await pipeline(body, stream);
        }
        const { size } = await stat(temp);
        await rename(temp, target);
        return { size };
      } catch (error) {
        // The stream opens its file asynchronously: wait until it is closed, or the file could appear after rm.
        if (stream && !stream.closed) await once(stream, 'close').catch(() => {});
        await rm(temp, { force: true });
        throw error;
      }
    },

    get(key) {
      return createReadStream(pathFor(key));
    },

    async read(key) {
      return readFile(pathFor(key));
    },

    async delete(key) {
      try {
        await unlink(pathFor(key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    },

    async removeAbandonedWrites(gone) {
      const writers = await readdir(partialRoot).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [] as string[];
        throw error;
      });
      const others = writers.filter((id) => id !== writerId);
      if (others.length === 0) return 0;
      const dead = await gone(others);
      for (const id of dead) await rm(path.join(partialRoot, id), { recursive: true, force: true });
      return dead.size;
    },

    async exists(key) {
      try {
        return (await stat(pathFor(key))).isFile();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    },
  };
}
