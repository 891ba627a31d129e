// Wire shapes of the files vault, retrieval and the admin uploads family.
import { z } from 'zod';
import { objectId } from '../../platform/http/schemas.js';
import { FILE_STATUSES, INGESTION_STAGES } from './files.tables.js';

export const fileRecordSchema = z
  .object({
    _id: z.string(),
    uploadId: z.string().describe('same as _id'),
    originalname: z.string().describe('the uploaded name, reduced to its last path segment'),
    filename: z.string().describe('the stored name (id and extension); never changes'),
    mimetype: z.string(),
    extension: z.string(),
    size: z.number().int(),
    file_url: z.string().describe('download address; never changes'),
    status: z.enum(FILE_STATUSES),
    stage: z.enum(INGESTION_STAGES).describe('current or last ingestion stage'),
    progress: z.number().int().describe('0..100'),
    chunkCount: z.number().int(),
    error: z.string().nullable().describe('why ingestion failed, when status is error'),
    confidential: z.boolean(),
    shared: z.boolean().describe("part of the twin's knowledge, searched by holders of files.access"),
    collectionId: z.string().nullable(),
    institution: z.string(),
    user: z.string(),
    created: z.string(),
    updated: z.string(),
  })
  .describe('Uploaded file');
export type FileRecord = z.infer<typeof fileRecordSchema>;

export const uploadResultSchema = z.object({
  success: z.literal(true),
  uploadId: z.string(),
  status: z.literal('processing'),
});

export const fileListQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  collectionId: objectId.optional(),
});

export const fileListSchema = z.object({
  success: z.literal(true),
  data: z.array(fileRecordSchema),
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
});

export const fileIdParams = z.object({ fileId: objectId });

export const contentBody = z.object({ content: z.string().describe('the full new text; must not be empty') });
export const contentResultSchema = z.object({
  success: z.literal(true),
  reprocessing: z.boolean(),
  message: z.string(),
  uploadId: z.string(),
});

export const collectionSchema = z.object({
  _id: z.string(),
  name: z.string(),
  user: z.string(),
  institution: z.string(),
  fileCount: z.number().int(),
  isOwner: z.boolean(),
  created: z.string(),
});
export type CollectionRecord = z.infer<typeof collectionSchema>;
export const collectionBody = z.object({ name: z.string().trim().min(1).max(200) });

export const retrievalEntrySchema = z
  .object({
    uploadId: z.string(),
    originalname: z.string(),
    chunkText: z.string().describe('confidential chunks: at most 100 characters plus a suffix when longer'),
    chunkIndex: z.number().int(),
    length: z.number().int().describe('length of the chunk in characters (before any redaction)'),
    score: z.number(),
    mode: z.string().describe('RAG'),
    confidential: z.boolean(),
  })
  .describe('Retrieval entry');

export const searchBody = z.object({
  query: z.string().trim().min(1).max(2_000),
  limit: z.number().int().min(1).max(50).optional(),
});
export const searchResultSchema = z.object({ success: z.literal(true), results: z.array(retrievalEntrySchema) });

export const adminUploadsQuery = z.object({
  institutionId: objectId.optional(),
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
