// Uploads with progress (XMLHttpRequest: fetch cannot report upload progress) and downloads through
// the session token (a plain link cannot carry the header).
import { ApiError, type FailureBody } from '../api/api-error';
import { rawFetch, tokenStore } from '../api/client';

export interface UploadOptions {
  collectionId?: string;
  confidential?: boolean;
  onProgress?(fraction: number): void;
}

export function uploadFile(file: File, options: UploadOptions = {}): Promise<{ uploadId: string }> {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    if (options.collectionId) form.append('collectionId', options.collectionId);
    if (options.confidential) form.append('confidential', 'true');
    form.append('file', file);
    const request = new XMLHttpRequest();
    request.open('POST', '/api/user/files');
    const token = tokenStore.get();
    if (token) request.setRequestHeader('x-access-token', token);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) options.onProgress?.(event.loaded / event.total);
    };
    request.onload = () => {
      let body: FailureBody & { uploadId?: string } = {};
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // not JSON: reported by status below
      }
      if (request.status >= 200 && request.status < 300 && body.uploadId) resolve({ uploadId: body.uploadId });
      else reject(new ApiError(request.status, body));
    };
    request.onerror = () => reject(new TypeError('The upload could not reach the service'));
    request.send(form);
  });
}

export async function downloadTo(path: string, filename: string): Promise<void> {
  const response = await rawFetch(path);
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
