// Blob storage in an S3-compatible object store: the scaled shape's files, reached alike by every
// process (FILES_S3_*). Same contract as the local store (storage.ts): service-made keys validated
// the same way, a key never holds a partial object (S3 shows an object only once its upload is
// complete), a missing key reads as ENOENT, deleting a missing key is done.
// Nothing is held whole in memory: bodies are sent in parts of PART_SIZE (at most QUEUE_SIZE of them
// in flight) and objects are read as the response streams in.
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { assertValidKey, type FileStorage, type StorageBody } from './storage.js';

/** Smallest part S3 accepts (5 MiB); a body below it goes up in one request. */
const PART_SIZE = 5 * 1024 * 1024;
/** Never a service-made key (those have a '/' and a date), so the check never finds an object. */
const CHECK_KEY = 'startup-check';
/** Parts in flight per upload: bounds an upload's memory to about QUEUE_SIZE × PART_SIZE. */
const QUEUE_SIZE = 2;

export interface S3StorageOptions {
  bucket: string;
  /** The store's URL (MinIO, a cloud other than AWS, a test peer); unset: AWS S3 of the region. */
  endpoint?: string;
  region: string;
  /** Path-style addressing (https://host/bucket/key), which MinIO and most self-hosted stores need. */
  forcePathStyle?: boolean;
  /** Unset: the SDK's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export interface S3Storage extends FileStorage {
  /**
   * Reads a key that does not exist: resolves when the store answers "no such key" (the bucket is there
   * and the credentials may read it), throws the store's own error otherwise (no bucket, access denied,
   * no answer). A store that answers a missing key with 403 (no s3:ListBucket) fails it too.
   */
  check(): Promise<void>;
  /** Closes the client's connections. */
  close(): Promise<void>;
}

export function createS3Storage(options: S3StorageOptions): S3Storage {
  const client = new S3Client({
    region: options.region,
    endpoint: options.endpoint,
    forcePathStyle: options.forcePathStyle ?? false,
    credentials: options.credentials,
    // Checksums only where S3 requires them: the SDK's default trailing checksums (aws-chunked bodies)
    // are not understood by every S3-compatible store.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const Bucket = options.bucket;

  return {
    async put(key, body) {
      assertValidKey(key);
      if (Buffer.isBuffer(body)) {
        await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentLength: body.length }));
        return { size: body.length };
      }
      const source = { size: 0, error: undefined as unknown };
      const counted = Readable.from(countBytes(body, source), { objectMode: false });
      // A failed upload is aborted (its parts removed); a partial object is never visible under the key.
      const upload = new Upload({ client, params: { Bucket, Key: key, Body: counted }, partSize: PART_SIZE, queueSize: QUEUE_SIZE });
      try {
        await upload.done();
      } catch (error) {
        counted.destroy();
        // The source's own failure (a client gone, a parser's error) is the cause, whatever the abort then said.
        throw source.error ?? error;
      }
      return { size: source.size };
    },

    get(key) {
      assertValidKey(key);
      return objectStream(client, Bucket, key);
    },

    async read(key) {
      assertValidKey(key);
      try {
        const response = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return Buffer.from(await response.Body!.transformToByteArray());
      } catch (error) {
        throw asMissing(error, key);
      }
    },

    async delete(key) {
      assertValidKey(key);
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    },

    async exists(key) {
      assertValidKey(key);
      try {
        await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    },

    async check() {
      try {
        const response = await client.send(new GetObjectCommand({ Bucket, Key: CHECK_KEY }));
        (response.Body as Readable | undefined)?.destroy();
      } catch (error) {
        if (!(error instanceof S3ServiceException && error.name === 'NoSuchKey')) throw error;
      }
    },

    async close() {
      client.destroy();
    },
  };
}

/** The body's bytes as they pass, counted; a source that fails fails the upload, and its error is kept. */
async function* countBytes(body: Exclude<StorageBody, Buffer>, source: { size: number; error: unknown }): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      source.size += bytes.length;
      yield bytes;
    }
  } catch (error) {
    source.error = error;
    throw error;
  }
}

/**
 * A stream of the object that asks for it on the first read (a stream never read costs no request)
 * and follows the reader's pace; destroying it aborts the request. A missing key is an ENOENT error.
 */
function objectStream(client: S3Client, Bucket: string, key: string): Readable {
  const abort = new AbortController();
  let source: Readable | undefined;
  let started = false;

  const stream = new Readable({
    read() {
      if (source) {
        source.resume();
        return;
      }
      if (started) return;
      started = true;
      client.send(new GetObjectCommand({ Bucket, Key: key }), { abortSignal: abort.signal }).then(
        (response) => {
          const body = response.Body as Readable;
          if (stream.destroyed) {
            body.destroy();
            return;
          }
          source = body;
          body.on('data', (chunk: Buffer) => {
            if (!stream.push(chunk)) body.pause();
          });
          body.once('end', () => stream.push(null));
          body.once('error', (error) => stream.destroy(error));
        },
        (error: unknown) => stream.destroy(asMissing(error, key) as Error),
      );
    },
    destroy(error, callback) {
      abort.abort();
      source?.destroy();
      callback(error);
    },
  });
  return stream;
}

function isMissing(error: unknown): boolean {
  if (!(error instanceof S3ServiceException) || error.name === 'NoSuchBucket') return false;
  return error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata?.httpStatusCode === 404;
}

/** A missing object as the local store reports a missing file, so callers handle both alike. */
function asMissing(error: unknown, key: string): unknown {
  if (!isMissing(error)) return error;
  return Object.assign(new Error(`ENOENT: no such stored file: ${key}`), { code: 'ENOENT' });
}
