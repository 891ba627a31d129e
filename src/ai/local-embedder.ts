// The built-in embedder of the embedded shape (no model endpoint configured): a hashed bag of words
// and character trigrams, signed, L2-normalised, of a fixed dimension. Deterministic and fast; it
// gives the vector side of hybrid search lexical-fuzzy similarity (typos, word forms) without a model.
import { createHash } from 'node:crypto';

export const LOCAL_EMBEDDER_ID = 'local-hash-v1';

const TOKEN = /[\p{L}\p{N}]+/gu;

/** 32-bit FNV-1a: cheap and well spread for short strings. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function add(vector: Float64Array, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  const sign = hash & 0x80000000 ? -1 : 1;
  vector[hash % vector.length] += sign * weight;
}

export function localEmbedding(text: string, dimensions: number): number[] {
  const vector = new Float64Array(dimensions);
  const words = text.toLowerCase().normalize('NFKC').match(TOKEN) ?? [];
  for (const word of words) {
    add(vector, `w:${word}`, 1);
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i += 1) add(vector, `c:${padded.slice(i, i + 3)}`, 0.35);
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm === 0) {
    // An empty or symbol-only text still needs a valid, stable unit vector (cosine distance is undefined on zero).
    const seed = createHash('sha256').update(text).digest();
    vector[seed[0] % dimensions] = 1;
    return Array.from(vector);
  }
  return Array.from(vector, (value) => value / norm);
}
