// ObjectId-like identifiers: 24 lowercase hex characters, made by the service.
// 4 bytes of seconds, 5 random bytes fixed per process, 3 bytes of a counter:
// sortable by creation time and unique across processes without a shared sequence.
import { randomBytes } from 'node:crypto';

const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export const OBJECT_ID_PATTERN = /^[0-9a-f]{24}$/;

export function newId(): string {
  counter = (counter + 1) % 0xffffff;
  const seconds = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0');
  return seconds + processPart + counter.toString(16).padStart(6, '0');
}

export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OBJECT_ID_PATTERN.test(value);
}
