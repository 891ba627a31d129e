// MCP servers of the twin: add one (its credential is sent once and never shown again: the list only
// says whether one is set, behaviour 9), see the tools each lists, delete many.
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import type { McpServer } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { bulkDelete, fieldErrors } from './admin-api';
import { AdminList, Field } from './ui';

export default function McpServers() {
  return (
    <>
      <h1>MCP servers</h1>
      <AddServer />
      <AdminList<McpServer>
        title="MCP servers"
        path="/api/admin/mcp-servers"
        queryKey="admin-mcp"
        rowLabel={(row) => row.name}
        bulk={[{ label: 'Delete', run: (ids) => bulkDelete('mcp-servers', ids), danger: true }]}
        columns={[
          { header: 'Name', cell: (row) => row.name },
          { header: 'URL', cell: (row) => row.url },
          { header: 'Credential', cell: (row) => (row.hasCredential ? 'Set (hidden)' : 'None') },
          { header: 'Approval', cell: (row) => (row.requireApproval ? 'Required' : 'Not required') },
          { header: 'Tools', cell: (row) => (row.toolsError ? `Could not list: ${row.toolsError}` : row.tools.map((tool) => tool.name).join(', ') || 'none') },
        ]}
      />
    </>
  );
}

function AddServer() {
  const queryClient = useQueryClient();
  const empty = { name: '', url: '', credential: '', requireApproval: true };
  const [form, setForm] = useState(empty);
  const [error, setError] = useState<unknown>(null);
  const [added, setAdded] = useState<string | null>(null);
  const errors = fieldErrors(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setAdded(null);
    try {
      const body = { name: form.name, url: form.url, requireApproval: form.requireApproval, ...(form.credential ? { credential: form.credential } : {}) };
      const answer = await unwrap(api.POST('/api/admin/mcp-server', { body }));
      setAdded(`Added ${answer.data.name}${answer.data.hasCredential ? ' (credential stored, never shown again)' : ''}.`);
      setForm(empty);
      await queryClient.invalidateQueries({ queryKey: ['admin-mcp'] });
      await queryClient.invalidateQueries({ queryKey: ['admin-tools'] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <details className="card">
      <summary>Add an MCP server</summary>
      <form onSubmit={submit} className="stack-form" noValidate>
        <Field label="Name" error={errors.name}>
          {(props) => <input {...props} value={form.name} onChange={(event) => setForm({ ...form, name: event.target.value })} />}
        </Field>
        <Field label="URL" error={errors.url}>
          {(props) => <input type="url" {...props} value={form.url} onChange={(event) => setForm({ ...form, url: event.target.value })} />}
        </Field>
        <Field label="Credential" error={errors.credential} hint="Stored encrypted; it is never shown again.">
          {(props) => <input type="password" autoComplete="off" {...props} value={form.credential} onChange={(event) => setForm({ ...form, credential: event.target.value })} />}
        </Field>
        <label className="switch">
          <input type="checkbox" role="switch" checked={form.requireApproval} onChange={(event) => setForm({ ...form, requireApproval: event.target.checked })} />
          Ask for approval before a tool runs
        </label>
        <button type="submit">Add server</button>
        {added && <p role="status">{added}</p>}
        {Object.keys(errors).length === 0 && <ErrorNotice error={error} />}
      </form>
    </details>
  );
}
