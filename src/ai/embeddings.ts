// Embeddings for retrieval: the configured OpenAI-compatible embedding model when one is set
// (EMBEDDING_MODEL with OPENAI_BASE_URL), else the built-in local embedder. Every vector has the
// configured dimension, because the database column has one fixed size.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { Config } from '../config.js';
import { LOCAL_EMBEDDER_ID, localEmbedding } from './local-embedder.js';
import { loadAiSdk } from './sdk.js';

export interface Embedder {
  /** Model identity, for logs. */
  id: string;
  dimensions: number;
  /**
   * Cosine similarity below which a vector-only hit is dropped: nearest neighbours always exist, even
   * for a query that matches nothing. Model-specific; 0 keeps every neighbour.
   */
  minSimilarity: number;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

export const DEFAULT_EMBEDDING_DIMENSIONS = 256;

/** Below this many characters a batch is embedded in place (a search's query): a thread's round trip would cost more. */
const IN_PLACE_CHARS = 4_000;

/**
 * The built-in embedder. With `offLoop` (a CPU pool's task `embed`), batches of any size run on a
 * worker thread, so ingesting a large file never holds the event loop.
 */
export function createLocalEmbedder(dimensions = DEFAULT_EMBEDDING_DIMENSIONS, offLoop?: (texts: string[], dimensions: number) => Promise<number[][]>): Embedder {
  return {
    id: LOCAL_EMBEDDER_ID,
    dimensions,
    // Unrelated texts score about 0 ± 0.1 with hashed features; a shared word or close spelling scores well above.
    minSimilarity: 0.2,
    async embed(texts) {
      const chars = texts.reduce((sum, text) => sum + text.length, 0);
      if (offLoop && chars > IN_PLACE_CHARS) return offLoop(texts, dimensions);
      return texts.map((text) => localEmbedding(text, dimensions));
    },
  };
}

export function createEmbedder(config: Config, offLoop?: (texts: string[], dimensions: number) => Promise<number[][]>): Embedder {
  const { baseUrl, apiKey, embeddingModel } = config.model;
  const dimensions = config.model.embeddingDimensions ?? DEFAULT_EMBEDDING_DIMENSIONS;
  if (!baseUrl || !embeddingModel) return createLocalEmbedder(dimensions, offLoop);
  const provider = createOpenAICompatible({ name: 'embeddings', baseURL: baseUrl, apiKey });
  const model = provider.embeddingModel(embeddingModel);
  return {
    id: embeddingModel,
    dimensions,
    minSimilarity: 0.3,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const { embedMany } = await loadAiSdk();
      const { embeddings } = await embedMany({
        model,
        values: texts,
        abortSignal: signal,
        maxRetries: 2,
        providerOptions: { openaiCompatible: { dimensions } },
      });
      for (const embedding of embeddings) {
        if (embedding.length !== dimensions) {
          throw new Error(`Embedding model ${embeddingModel} returned ${embedding.length} dimensions, expected ${dimensions} (EMBEDDING_DIMENSIONS)`);
        }
      }
      return embeddings;
    },
  };
}
