// Memory: the person's own memories and the twin's shared ones. Rows say whether the caller may edit
// them (editable); the Enable User Memory switch turns personal memory off without deleting it.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import type { MemoryRow } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { useSettings } from '../settings/useSettings';

function MemoryEditor({ row, onDone }: { row: MemoryRow; onDone(): void }) {
  const queryClient = useQueryClient();
  const [value, setValue] = useState(row.key_value);
  const [description, setDescription] = useState(row.key_description);
  const [error, setError] = useState<unknown>(null);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await unwrap(api.PATCH('/api/user/memory/{id}', { params: { path: { id: row._id } }, body: { key_value: value, key_description: description } }));
      await queryClient.invalidateQueries({ queryKey: ['memory'] });
      onDone();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <form onSubmit={save} className="inline-form">
      <label>
        Value of {row.key_name}
        <input value={value} onChange={(event) => setValue(event.target.value)} required maxLength={4000} />
      </label>
      <label>
        Description
        <input value={description} onChange={(event) => setDescription(event.target.value)} maxLength={1000} />
      </label>
      <button type="submit">Save</button>
      <button type="button" className="button-secondary" onClick={onDone}>
        Cancel
      </button>
      <ErrorNotice error={error} />
    </form>
  );
}

function MemoryTable({ title, rows }: { title: string; rows: MemoryRow[] }) {
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const remove = async (row: MemoryRow) => {
    if (!window.confirm(`Forget ${row.key_name}?`)) return;
    setError(null);
    try {
      await unwrap(api.DELETE('/api/user/memory/{id}', { params: { path: { id: row._id } } }));
      await queryClient.invalidateQueries({ queryKey: ['memory'] });
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section className="card" aria-label={title}>
      <h2>{title}</h2>
      <ErrorNotice error={error} />
      {rows.length === 0 ? (
        <p className="muted">Nothing here yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row._id}>
                <td>
                  {row.key_name}
                  {row.key_description && <div className="muted">{row.key_description}</div>}
                </td>
                <td>{editing === row._id ? <MemoryEditor row={row} onDone={() => setEditing(null)} /> : row.key_value}</td>
                <td className="button-row">
                  {row.editable ? (
                    <>
                      <button type="button" className="button-secondary" onClick={() => setEditing(row._id)} aria-label={`Edit ${row.key_name}`}>
                        Edit
                      </button>
                      <button type="button" className="button-danger" onClick={() => void remove(row)} aria-label={`Delete ${row.key_name}`}>
                        Delete
                      </button>
                    </>
                  ) : (
                    <span className="muted">Set by the twin's administrators</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export default function MemoryPage() {
  const queryClient = useQueryClient();
  const memory = useQuery({ queryKey: ['memory'], queryFn: () => unwrap(api.GET('/api/user/memory')) });
  const { settings, save } = useSettings();
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [shared, setShared] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const enabled = settings.data?.data.userMemoryEnabled ?? true;

  const add = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await unwrap(api.POST('/api/user/memory', { body: { key_name: name, key_value: value, shared } }));
      setName('');
      setValue('');
      await queryClient.invalidateQueries({ queryKey: ['memory'] });
    } catch (caught) {
      setError(caught);
    }
  };

  const rows = memory.data?.data ?? [];
  return (
    <main id="main" className="page">
      <h1>Memory</h1>
      <section className="card">
        <label className="switch">
          <input type="checkbox" role="switch" checked={enabled} onChange={(event) => save.mutate({ userMemoryEnabled: event.target.checked })} disabled={settings.isLoading} />
          Enable User Memory
        </label>
        <p className="muted">
          {enabled
            ? 'Your personal memories are used in your conversations, and new ones may be saved.'
            : 'Personal memory is off: none is used and none is saved. Your entries stay here to view, edit or delete. Shared memory still applies.'}
        </p>
        <ErrorNotice error={save.error ?? settings.error} />
      </section>
      <section className="card" aria-labelledby="add-memory">
        <h2 id="add-memory">Remember something</h2>
        <form onSubmit={add} className="inline-form">
          <label>
            Name
            <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} />
          </label>
          <label>
            Value
            <input value={value} onChange={(event) => setValue(event.target.value)} required maxLength={4000} />
          </label>
          <label className="switch">
            <input type="checkbox" checked={shared} onChange={(event) => setShared(event.target.checked)} />
            Shared with the whole twin
          </label>
          <button type="submit">Add</button>
        </form>
        <ErrorNotice error={error} />
      </section>
      <ErrorNotice error={memory.error} />
      <MemoryTable title="Your memories" rows={rows.filter((row) => !row.shared)} />
      <MemoryTable title="Shared memory of this twin" rows={rows.filter((row) => row.shared)} />
    </main>
  );
}
