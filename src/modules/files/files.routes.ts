// /api/user/files, /api/user/files/collections and /api/user/rag: the person's files vault.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, messageSchema, type App } from '../../platform/http/schemas.js';
import type { CollectionsService } from './collections.service.js';
import type { FilesService } from './files.service.js';
import {
  collectionBody,
  collectionSchema,
  contentBody,
  contentResultSchema,
  fileIdParams,
  fileListQuery,
  fileListSchema,
  fileRecordSchema,
  searchBody,
  searchResultSchema,
  uploadResultSchema,
} from './files.schemas.js';
import type { UploadPart } from './upload.js';

const tags = ['files'];
const binary = z.unknown().describe('the file bytes');

/** RFC 6266: an ASCII fallback and the exact UTF-8 name. */
export function attachment(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** The upload: its scope (files.module.ts) is the only one that parses multipart bodies. */
export function uploadRoute(app: App, files: FilesService): void {
  app.post(
    '/api/user/files',
    {
      schema: {
        tags,
        summary: 'Upload a file to the vault',
        description:
          "multipart/form-data: `file` (one), optional `collectionId`, `confidential` ('true'/'false'), `shared` ('true' needs files.access). " +
          'The file is streamed to storage and ingested in the background (poll GET /api/user/files/{fileId}). ' +
          'Refusals: 400 EMPTY_FILE, NO_FILE, NO_TWIN; 413 FILE_TOO_LARGE (UPLOAD_LIMIT); 415 UNSUPPORTED_TYPE, or TYPE_MISMATCH when the content ' +
          "is not what the name says (a .txt that is a ZIP); 403 FILE_UPLOAD_DISABLED (the twin's disableFileUploadForUser, admins exempt) " +
          "or FILE_LIMIT_REACHED (the twin's maxFiles per person; 0 means no limit); 404 when collectionId is not a collection the caller may use.",
        consumes: ['multipart/form-data'],
        response: { 201: uploadResultSchema, ...failures(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      const { uploadId } = await files.upload(actorOf(request), request.parts() as AsyncIterable<UploadPart>);
      return reply.status(201).send({ success: true as const, uploadId, status: 'processing' as const });
    },
  );
}

export function fileRoutes(app: App, files: FilesService, collections: CollectionsService): void {
  app.get(
    '/api/user/files',
    {
      schema: {
        tags,
        summary: 'List files',
        description: "The caller's files in the current twin, newest first; holders of files.access also see the twin's shared files.",
        querystring: fileListQuery,
        response: { 200: fileListSchema, ...failures(400, 401) },
      },
    },
    async (request) => ({ success: true as const, ...(await files.list(actorOf(request), request.query)) }),
  );

  app.get(
    '/api/user/files/collections',
    {
      schema: {
        tags,
        summary: 'List collections',
        description: "The caller's collections in the current twin; holders of files.access see every collection of the twin.",
        response: { 200: z.object({ success: z.literal(true), data: z.array(collectionSchema) }), ...failures(401) },
      },
    },
    async (request) => ({ success: true as const, data: await collections.list(actorOf(request)) }),
  );

  app.post(
    '/api/user/files/collections',
    {
      schema: {
        tags,
        summary: 'Create a collection',
        description: 'A named group of files in the current twin, owned by the caller. Upload into it with collectionId.',
        body: collectionBody,
        response: { 201: z.object({ success: z.literal(true), data: collectionSchema }), ...failures(400, 401) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await collections.create(actorOf(request), request.body.name) }),
  );

  app.get(
    '/api/user/files/collections/:id/zip',
    {
      schema: {
        tags,
        summary: 'Download a collection as a ZIP',
        description:
          'Streamed ZIP of every file in the collection (spec behaviour 10): allowed to the owner of the collection or a holder of ' +
          'files.access in its twin. Anyone else gets 404, as if it did not exist.',
        params: idParams,
        produces: ['application/zip'],
        response: { 200: binary, ...failures(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { filename, stream } = await collections.zip(actorOf(request), request.params.id);
      reply.header('content-type', 'application/zip').header('content-disposition', attachment(filename)).header('x-content-type-options', 'nosniff');
      return reply.send(stream);
    },
  );

  app.get(
    '/api/user/files/:fileId',
    {
      schema: {
        tags,
        summary: 'Get a file record',
        description: 'Status (processing, ready, error with the reason), stage, progress and chunkCount. Readable by the uploader and holders of files.access in its twin; others get 404.',
        params: fileIdParams,
        response: { 200: z.object({ success: z.literal(true), data: fileRecordSchema }), ...failures(400, 401, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await files.get(actorOf(request), request.params.fileId) }),
  );

  app.get(
    '/api/user/files/:fileId/download',
    {
      schema: {
        tags,
        summary: 'Download a file',
        description: 'The stored bytes as an attachment (Content-Disposition attachment, X-Content-Type-Options nosniff). Same readers as the record.',
        params: fileIdParams,
        response: { 200: binary, ...failures(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { file, stream } = await files.download(actorOf(request), request.params.fileId);
      const type = file.mimetype.startsWith('text/') || file.mimetype.endsWith('json') ? `${file.mimetype}; charset=utf-8` : file.mimetype;
      reply
        .header('content-type', type)
        .header('content-length', String(file.size))
        .header('content-disposition', attachment(file.originalname))
        .header('x-content-type-options', 'nosniff');
      return reply.send(stream);
    },
  );

  app.put(
    '/api/user/files/:fileId/content',
    {
      schema: {
        tags,
        summary: "Replace a text file's content",
        description:
          'Text-editable types only (Markdown, plain text, HTML, code and data formats): 415 for PDF, images and office documents. ' +
          "Only the caller's own files (others: 404). Same id, filename and file_url; the whole ingestion runs again and search shows " +
          'the previous text until the new one is ready. Empty content: 400 EMPTY_CONTENT; over UPLOAD_LIMIT: 413.',
        params: fileIdParams,
        body: contentBody,
        response: { 200: contentResultSchema, ...failures(400, 401, 404, 413, 415) },
      },
    },
    async (request) => {
      const { uploadId } = await files.editContent(actorOf(request), request.params.fileId, request.body.content);
      return { success: true as const, reprocessing: true, message: 'Content saved; the file is being re-indexed', uploadId };
    },
  );

  app.delete(
    '/api/user/files/:fileId',
    {
      schema: {
        tags,
        summary: 'Delete a file',
        description: "The caller's own file, with its chunks and vectors and the stored bytes. Others' files: 404.",
        params: fileIdParams,
        response: { 200: messageSchema, ...failures(400, 401, 404) },
      },
    },
    async (request) => {
      await files.remove(actorOf(request), request.params.fileId);
      return { success: true as const, message: 'File deleted' };
    },
  );

  app.post(
    '/api/user/rag/search',
    {
      schema: {
        tags: ['rag'],
        summary: 'Search the vault',
        description:
          "Passages the caller may read (own files of the current twin; the twin's shared files with files.access), best first. " +
          'Hybrid (full text + pgvector, reciprocal rank fusion) where pgvector exists, full text otherwise. Confidential chunks are ' +
          'redacted to 100 characters plus a suffix. limit defaults to 10.',
        body: searchBody,
        response: { 200: searchResultSchema, ...failures(400, 401) },
      },
    },
    async (request) => ({
      success: true as const,
      results: await files.search(actorOf(request), request.body.query, request.body.limit ?? 10),
    }),
  );
}
