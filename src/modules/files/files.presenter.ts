// Shapes file and collection rows for the wire, field by field.
import type { CollectionRow, FileRow } from './files.tables.js';
import type { CollectionRecord, FileRecord } from './files.schemas.js';

export function presentFile(row: FileRow): FileRecord {
  return {
    _id: row.id,
    uploadId: row.id,
    originalname: row.originalname,
    filename: `${row.id}${row.extension}`,
    mimetype: row.mimetype,
    extension: row.extension,
    size: row.size,
    file_url: `/api/user/files/${row.id}/download`,
    status: row.status,
    stage: row.stage,
    progress: row.progress,
    chunkCount: row.chunkCount,
    error: row.error,
    confidential: row.confidential,
    shared: row.shared,
    collectionId: row.collectionId,
    institution: row.twinId,
    user: row.userId,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}

export function presentCollection(row: CollectionRow & { fileCount: number }, viewerId: string): CollectionRecord {
  return {
    _id: row.id,
    name: row.name,
    user: row.userId,
    institution: row.twinId,
    fileCount: Number(row.fileCount),
    isOwner: row.userId === viewerId,
    created: row.createdAt.toISOString(),
  };
}
