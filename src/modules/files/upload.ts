// Receiving one multipart upload: the file part is streamed straight to storage under a key the
// service makes, then checked (size, emptiness, type from name AND content). Anything refused
// leaves nothing behind in storage.
import type { Readable } from 'node:stream';
import { AppError, BadRequestError } from '../../platform/http/errors.js';
import { newStorageKey, type FileStorage } from '../../platform/storage/storage.js';
import { detectType, safeDisplayName, TypeMismatch, UnsupportedType, type DetectedType } from './detect.js';

/** The parts of a multipart request, as @fastify/multipart yields them (only what is used here). */
export type UploadPart =
  | { type: 'file'; fieldname: string; filename: string; file: Readable & { truncated?: boolean } }
  | { type: 'field'; fieldname: string; value: unknown };

export interface ReceivedUpload {
  storageKey: string;
  originalname: string;
  size: number;
  type: DetectedType;
  fields: Record<string, string>;
}

const HEAD_BYTES = 8 * 1024;

export class PayloadTooLargeError extends AppError {
  constructor(limit: number) {
    super(413, `The file is larger than the upload limit of ${formatBytes(limit)}`, 'FILE_TOO_LARGE');
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string, code: string) {
    super(415, message, code);
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 10) / 10} KB`;
  return `${bytes} bytes`;
}

const isTooLarge = (error: unknown) => (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE';

/** An error of the multipart parser comes from the request's own bytes: a 400, not a 500. */
function malformed(error: unknown): unknown {
  if (error instanceof AppError || isTooLarge(error)) return error;
  return new BadRequestError('The multipart body is malformed (boundary missing or wrong, or a part left unclosed)', 'INVALID_MULTIPART');
}

/** The parts, with the parser's own failures (no boundary, a cut-off body) turned into 400s. */
async function* parsedParts(parts: AsyncIterable<UploadPart>): AsyncGenerator<UploadPart> {
  const iterator = parts[Symbol.asyncIterator]();
  for (;;) {
    let step: IteratorResult<UploadPart>;
    try {
      step = await iterator.next();
    } catch (error) {
      throw malformed(error);
    }
    if (step.done) return;
    yield step.value;
  }
}

export async function receiveUpload(parts: AsyncIterable<UploadPart>, storage: FileStorage, limit: number): Promise<ReceivedUpload> {
  const fields: Record<string, string> = {};
  let stored: { key: string; name: string; size: number } | undefined;
  try {
    const rest = parsedParts(parts);
    for await (const part of rest) {
      if (part.type === 'field') {
        if (typeof part.value === 'string') fields[part.fieldname] = part.value;
        continue;
      }
      if (stored || part.fieldname !== 'file') {
        part.file.resume(); // drain it: one file per upload, in the field "file"
        throw new BadRequestError("Send exactly one file, in the multipart field 'file'", 'ONE_FILE');
      }
      const key = newStorageKey('files');
      const { size } = await storage.put(key, part.file).catch(async (error: unknown) => {
        throw await blame(rest, error);
      });
      stored = { key, name: part.filename, size };
      if (part.file.truncated) throw new PayloadTooLargeError(limit);
    }
  } catch (error) {
    if (stored) await storage.delete(stored.key);
    if (isTooLarge(error)) throw new PayloadTooLargeError(limit);
    throw error;
  }
  if (!stored) throw new BadRequestError("No file was uploaded: send it in the multipart field 'file'", 'NO_FILE');
  try {
    if (stored.size === 0) throw new BadRequestError('The file is empty', 'EMPTY_FILE');
    const originalname = safeDisplayName(stored.name);
    const head = await readHead(storage, stored.key);
    let type: DetectedType;
    try {
      type = detectType(originalname, head, stored.size <= head.length);
    } catch (error) {
      if (error instanceof UnsupportedType) throw new UnsupportedMediaTypeError(error.message, 'UNSUPPORTED_TYPE');
      if (error instanceof TypeMismatch) throw new UnsupportedMediaTypeError(error.message, 'TYPE_MISMATCH');
      throw error;
    }
    return { storageKey: stored.key, originalname, size: stored.size, type, fields };
  } catch (error) {
    await storage.delete(stored.key);
    throw error;
  }
}

/**
 * A part's stream failed while stored: when the parser failed (a part cut off), it also queued the
 * error for the next step, which then throws the 400; otherwise storage failed and its error stands.
 */
async function blame(rest: AsyncIterator<UploadPart>, error: unknown): Promise<unknown> {
  try {
    await rest.next();
  } catch (parserError) {
    return parserError;
  }
  return error;
}

async function readHead(storage: FileStorage, key: string): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let length = 0;
  const stream = storage.get(key);
  for await (const chunk of stream) {
    pieces.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    if (length >= HEAD_BYTES) break;
  }
  stream.destroy();
  return Buffer.concat(pieces).subarray(0, HEAD_BYTES);
}
