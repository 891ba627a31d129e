// The files vault's CPU-heavy steps, run on the CPU pool's threads (platform/workers): the built-in
// embedder's vectors, text extraction, chunking and sanitizing. Plain inputs and outputs (copied
// between threads); an ExtractionError keeps its name across.
import { localEmbedding } from '../../ai/local-embedder.js';
import { chunkText, sanitizeChunk } from './chunking.js';
import type { FileKind } from './detect.js';
import { ExtractionError, extractText } from './extract.js';

export const tasks = {
  embed: ({ texts, dimensions }: { texts: string[]; dimensions: number }): number[][] => texts.map((text) => localEmbedding(text, dimensions)),
  extract: async ({ kind, content }: { kind: FileKind; content: Uint8Array }): Promise<string> => {
    try {
      return await extractText(kind, Buffer.from(content.buffer, content.byteOffset, content.byteLength));
    } catch (err) {
      if (err instanceof ExtractionError) err.name = 'ExtractionError'; // the pool keeps the name, not the class
      throw err;
    }
  },
  chunk: ({ text }: { text: string }): string[] => chunkText(text),
  sanitize: ({ pieces }: { pieces: string[] }): string[] => pieces.map(sanitizeChunk).filter((piece) => piece.length > 0),
};
