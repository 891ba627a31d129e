// The files vault: upload (with progress), each file's ingestion stage as it runs, collections (create,
// filter, download as ZIP), download, edit a text file's content, delete.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { api, rawFetch, unwrap } from '../api/client';
import type { VaultFile } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { downloadTo, uploadFile } from '../files/transfer';

const STAGE_LABEL: Record<string, string> = {
  extract: 'Reading the text',
  chunk: 'Splitting into passages',
  sanitize: 'Checking the passages',
  embed: 'Indexing for search',
  finalize: 'Finishing',
};

const TEXT_EXTENSIONS = new Set(['txt', 'md', 'markdown', 'csv', 'json', 'html', 'htm', 'xml', 'yaml', 'yml', 'js', 'ts', 'py', 'css', 'sql', 'sh']);

function statusText(file: VaultFile): string {
  if (file.status === 'ready') return `Ready · ${file.chunkCount} ${file.chunkCount === 1 ? 'passage' : 'passages'}`;
  if (file.status === 'error') return `Failed: ${file.error ?? 'the file could not be read'}`;
  return `${STAGE_LABEL[file.stage] ?? 'Processing'}… ${file.progress}%`;
}

export default function FilesPage() {
  const queryClient = useQueryClient();
  const fileInput = useRef<HTMLInputElement>(null);
  const [collectionId, setCollectionId] = useState('');
  const [confidential, setConfidential] = useState(false);
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [newCollection, setNewCollection] = useState('');
  const [editing, setEditing] = useState<{ file: VaultFile; text: string } | null>(null);

  const files = useQuery({
    queryKey: ['files', collectionId],
    queryFn: () => unwrap(api.GET('/api/user/files', { params: { query: { limit: 100, ...(collectionId ? { collectionId } : {}) } } })),
    // The ingestion stage shows live while any file is processing.
    refetchInterval: (query) => (query.state.data?.data.some((file) => file.status === 'processing') ? 1000 : false),
  });
  const collections = useQuery({ queryKey: ['collections'], queryFn: () => unwrap(api.GET('/api/user/files/collections')) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['files'] });

  const upload = async (event: FormEvent) => {
    event.preventDefault();
    const file = fileInput.current?.files?.[0];
    if (!file) return;
    setError(null);
    setProgress(0);
    try {
      await uploadFile(file, { collectionId: collectionId || undefined, confidential, onProgress: setProgress });
      if (fileInput.current) fileInput.current.value = '';
      await refresh();
      await queryClient.invalidateQueries({ queryKey: ['collections'] });
    } catch (caught) {
      setError(caught);
    } finally {
      setProgress(null);
    }
  };

  const act = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(caught);
    }
  };

  const createCollection = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      const created = await unwrap(api.POST('/api/user/files/collections', { body: { name: newCollection } }));
      setNewCollection('');
      await queryClient.invalidateQueries({ queryKey: ['collections'] });
      setCollectionId(created.data._id);
    });
  };

  const openEditor = (file: VaultFile) =>
    act(async () => {
      const text = await (await rawFetch(`/api/user/files/${file._id}/download`)).text();
      setEditing({ file, text });
    });
  const saveEdit = (event: FormEvent) => {
    event.preventDefault();
    if (!editing) return;
    void act(async () => {
      await unwrap(api.PUT('/api/user/files/{fileId}/content', { params: { path: { fileId: editing.file._id } }, body: { content: editing.text } }));
      setEditing(null);
      await refresh();
    });
  };

  const currentCollection = collections.data?.data.find((collection) => collection._id === collectionId);
  return (
    <main id="main" className="page">
      <h1>Files</h1>
      <section className="card" aria-labelledby="upload-heading">
        <h2 id="upload-heading">Add a file</h2>
        <form onSubmit={upload} className="inline-form">
          <label>
            File
            <input type="file" ref={fileInput} required />
          </label>
          <label className="switch">
            <input type="checkbox" checked={confidential} onChange={(event) => setConfidential(event.target.checked)} />
            Confidential (answers quote it only redacted)
          </label>
          <button type="submit" disabled={progress !== null}>
            Upload
          </button>
          {progress !== null && (
            <label>
              Uploading
              <progress max={1} value={progress} aria-valuetext={`${Math.round(progress * 100)}%`} />
            </label>
          )}
        </form>
        <ErrorNotice error={error} />
      </section>

      <section className="card" aria-labelledby="collections-heading">
        <h2 id="collections-heading">Collections</h2>
        <div className="inline-form">
          <label>
            Show
            <select value={collectionId} onChange={(event) => setCollectionId(event.target.value)}>
              <option value="">All files</option>
              {collections.data?.data.map((collection) => (
                <option key={collection._id} value={collection._id}>
                  {collection.name} ({collection.fileCount})
                </option>
              ))}
            </select>
          </label>
          {currentCollection && (
            <button type="button" className="button-secondary" onClick={() => void act(() => downloadTo(`/api/user/files/collections/${currentCollection._id}/zip`, `${currentCollection.name}.zip`))}>
              Download as ZIP
            </button>
          )}
        </div>
        <form onSubmit={createCollection} className="inline-form">
          <label>
            New collection
            <input value={newCollection} onChange={(event) => setNewCollection(event.target.value)} required maxLength={200} />
          </label>
          <button type="submit" className="button-secondary">
            Create
          </button>
        </form>
        <p className="muted">New uploads go into the collection shown.</p>
      </section>

      <ErrorNotice error={files.error ?? collections.error} />
      <table>
        <caption className="visually-hidden">Your files</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {files.data?.data.map((file) => (
            <tr key={file._id}>
              <td>
                {file.originalname}
                {file.confidential && <span className="badge">Confidential</span>}
              </td>
              <td aria-live="polite" data-status={file.status}>
                {statusText(file)}
              </td>
              <td className="button-row">
                <button type="button" className="button-secondary" onClick={() => void act(() => downloadTo(`/api/user/files/${file._id}/download`, file.originalname))} aria-label={`Download ${file.originalname}`}>
                  Download
                </button>
                {TEXT_EXTENSIONS.has(file.extension.replace(/^\./, '').toLowerCase()) && (
                  <button type="button" className="button-secondary" onClick={() => void openEditor(file)} aria-label={`Edit ${file.originalname}`}>
                    Edit
                  </button>
                )}
                <button
                  type="button"
                  className="button-danger"
                  aria-label={`Delete ${file.originalname}`}
                  onClick={() =>
                    window.confirm(`Delete ${file.originalname}?`) &&
                    void act(async () => {
                      await unwrap(api.DELETE('/api/user/files/{fileId}', { params: { path: { fileId: file._id } } }));
                      await refresh();
                    })
                  }
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {files.isSuccess && files.data.data.length === 0 && (
            <tr>
              <td colSpan={3}>No files yet. Files you add here ground the answers of assistants that search your files.</td>
            </tr>
          )}
        </tbody>
      </table>

      {editing && (
        <section className="card" aria-labelledby="edit-heading">
          <h2 id="edit-heading">Edit {editing.file.originalname}</h2>
          <form onSubmit={saveEdit}>
            <label>
              Content
              <textarea rows={12} value={editing.text} onChange={(event) => setEditing({ ...editing, text: event.target.value })} required />
            </label>
            <div className="button-row">
              <button type="submit">Save and re-index</button>
              <button type="button" className="button-secondary" onClick={() => setEditing(null)}>
                Cancel
              </button>
            </div>
          </form>
        </section>
      )}
    </main>
  );
}
