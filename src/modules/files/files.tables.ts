// The files vault: uploaded files, their collections, and the searchable chunks made by ingestion.
// A chunk belongs to one ingestion generation; search sees only the file's current generation, so a
// half-written re-ingestion is never visible. The pgvector column is added at start where it exists.
import { sql } from 'drizzle-orm';
import { boolean, customType, index, integer, pgTable, smallint, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, timestampColumn, updatedAt } from '../../platform/db/columns.js';

export const FILE_STATUSES = ['processing', 'ready', 'error'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];
export const INGESTION_STAGES = ['extract', 'chunk', 'sanitize', 'embed', 'finalize'] as const;
export type IngestionStage = (typeof INGESTION_STAGES)[number];

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

export const fileCollections = pgTable(
  'file_collections',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull(),
    userId: refColumn('user_id').notNull(),
    name: text('name').notNull(),
    createdAt: createdAt(),
    /** Deleted by its owner (personal-data delete): hidden at once, purged after the grace period. */
    deletedAt: timestampColumn('deleted_at'),
  },
  (t) => [index('file_collections_institution_user_idx').on(t.twinId, t.userId)],
);

export const files = pgTable(
  'files',
  {
    id: idColumn(),
    /** The twin the uploader was working in. */
    twinId: refColumn('institution_id').notNull(),
    userId: refColumn('user_id').notNull(),
    collectionId: refColumn('collection_id').references(() => fileCollections.id, { onDelete: 'set null' }),
    originalname: text('originalname').notNull(),
    /** Lowercase extension with the dot ('.pdf'), decided at upload. */
    extension: text('extension').notNull(),
    mimetype: text('mimetype').notNull(),
    /** What the content was found to be: pdf, docx, html, markdown, text, image. */
    kind: text('kind').notNull(),
    size: integer('size').notNull(),
    storageKey: text('storage_key').notNull(),
    confidential: boolean('confidential').notNull().default(false),
    /** Part of the twin's knowledge: searched by holders of files.access in the twin, not only the uploader. */
    shared: boolean('shared').notNull().default(false),
    status: text('status', { enum: FILE_STATUSES }).notNull().default('processing'),
    stage: text('stage', { enum: INGESTION_STAGES }).notNull().default('extract'),
    progress: smallint('progress').notNull().default(0),
    error: text('error'),
    chunkCount: integer('chunk_count').notNull().default(0),
    /** The generation search sees (0: none yet). */
    generation: integer('generation').notNull().default(0),
    /** The generation the latest ingestion job writes; stale jobs see a different number and stop. */
    pendingGeneration: integer('pending_generation').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** Deleted by its owner (personal-data delete): hidden from every list and search at once, purged after the grace period. */
    deletedAt: timestampColumn('deleted_at'),
  },
  (t) => [
    index('files_institution_user_idx').on(t.twinId, t.userId, t.createdAt),
    index('files_institution_collection_idx').on(t.twinId, t.collectionId),
  ],
);

export const fileChunks = pgTable(
  'file_chunks',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull(),
    fileId: refColumn('file_id')
      .notNull()
      .references(() => files.id, { onDelete: 'cascade' }),
    generation: integer('generation').notNull(),
    chunkIndex: integer('chunk_index').notNull(),
    text: text('text').notNull(),
    tsv: tsvector('tsv').generatedAlwaysAs(sql`to_tsvector('english', text)`),
  },
  (t) => [
    index('file_chunks_institution_file_idx').on(t.twinId, t.fileId, t.generation, t.chunkIndex),
    index('file_chunks_file_idx').on(t.fileId, t.generation),
    index('file_chunks_tsv_idx').using('gin', t.tsv),
  ],
);

export type FileRow = typeof files.$inferSelect;
export type NewFile = typeof files.$inferInsert;
export type CollectionRow = typeof fileCollections.$inferSelect;
