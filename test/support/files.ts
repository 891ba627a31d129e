// Helpers for tests of the files vault: upload through the real route, wait for ingestion, search.
import type { TestApp } from './app.js';
import { multipart, type MultipartFile } from './documents.js';

export async function uploadFile(t: TestApp, token: string, file: MultipartFile, fields: Record<string, string> = {}) {
  const { payload, headers } = multipart(fields, file);
  return t.app.inject({ method: 'POST', url: '/api/user/files', headers: { ...headers, 'x-access-token': token }, payload });
}

/** Uploads, waits for the ingestion job, and returns the file record. */
export async function uploadAndIngest(t: TestApp, token: string, file: MultipartFile, fields: Record<string, string> = {}) {
  const response = await uploadFile(t, token, file, fields);
  if (response.statusCode !== 201) throw new Error(`upload failed: ${response.statusCode} ${response.body}`);
  await t.platform.jobs.drain('files.ingest', 30_000);
  return getFile(t, token, response.json().uploadId as string);
}

export async function getFile(t: TestApp, token: string, id: string) {
  const response = await t.app.inject({ method: 'GET', url: `/api/user/files/${id}`, headers: { 'x-access-token': token } });
  if (response.statusCode !== 200) throw new Error(`get failed: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

export async function search(t: TestApp, token: string, query: string, limit?: number) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/user/rag/search',
    headers: { 'x-access-token': token },
    payload: limit ? { query, limit } : { query },
  });
  if (response.statusCode !== 200) throw new Error(`search failed: ${response.statusCode} ${response.body}`);
  return response.json().results as Array<{ uploadId: string; originalname: string; chunkText: string; chunkIndex: number; length: number; score: number; mode: string; confidential: boolean }>;
}
