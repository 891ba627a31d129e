// People: the list (search, pages, bulk activate / deactivate / delete), adding one person (the
// service's field errors at each field, what it did not apply listed), and a CSV import previewed
// row by row before it is sent, then its outcome per row.
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import type { AdminUser, ImportAnswer } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { useProfile } from '../session';
import { adminSend, fieldErrors } from './admin-api';
import { previewCsv, type Preview } from './csv-preview';
import { actionsFor } from './families';
import { Memberships } from './Memberships';
import { AdminList, Field, formatDate, type BulkAction } from './ui';

const bulk = (action: 'activate' | 'deactivate' | 'delete') => (ids: string[]) => unwrap(api.POST('/api/admin/users/bulk', { body: { action, ids } }));

export default function People() {
  const profile = useProfile();
  const can = actionsFor(profile).people;
  const actions: BulkAction[] = [];
  if (can.edit) actions.push({ label: 'Activate', run: bulk('activate') }, { label: 'Deactivate', run: bulk('deactivate') });
  if (can.remove) actions.push({ label: 'Delete', run: bulk('delete'), danger: true });
  const [editing, setEditing] = useState<AdminUser | null>(null);
  return (
    <>
      <h1>People</h1>
      {can.create && <AddPerson />}
      {can.create && <ImportPeople />}
      {editing && <EditPerson key={editing._id} user={editing} makeSuper={can.makeSuper} onClose={() => setEditing(null)} />}
      <AdminList<AdminUser>
        title="People"
        path="/api/admin/users"
        queryKey="admin-users"
        rowLabel={(row) => row.email}
        bulk={actions}
        columns={[
          { header: 'Email', cell: (row) => row.email },
          { header: 'Name', cell: (row) => [row.fname, row.lname].filter(Boolean).join(' ') },
          { header: 'Account', cell: (row) => row.accountType },
          { header: 'Status', cell: (row) => row.status },
          { header: 'Credits', cell: (row) => row.credits },
          { header: 'Created', cell: (row) => formatDate(row.created) },
        ]}
        rowActions={
          can.edit
            ? (row) => (
                <>
                  <button type="button" className="button-link" onClick={() => setEditing(row)}>
                    Edit<span className="visually-hidden"> {row.email}</span>
                  </button>{' '}
                  <ResetFactor user={row} />
                </>
              )
            : undefined
        }
      />
    </>
  );
}

/** The spec's edit table for one person: names, email, status, credits, account type; each error at its field. */
function EditPerson({ user, makeSuper, onClose }: { user: AdminUser; makeSuper: boolean; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [form, setForm] = useState({ email: user.email, fname: user.fname, lname: user.lname, status: user.status === 'trialing' ? 'trialing' : user.status === 'inactive' ? 'inactive' : 'active', credits: String(user.credits), accountType: user.accountType });
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const errors = fieldErrors(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setSaved(null);
    try {
      const body = {
        email: form.email,
        fname: form.fname,
        lname: form.lname,
        status: form.status as 'active' | 'inactive' | 'trialing',
        credits: Number(form.credits),
        accountType: form.accountType as 'user' | 'admin' | 'super',
      };
      const answer = await unwrap(api.PUT('/api/admin/user/{userId}', { params: { path: { userId: user._id } }, body }));
      const ignored = answer.ignoredFields ?? [];
      setSaved(`Saved.${ignored.length ? ` Not applied: ${ignored.join(', ')}.` : ''}`);
      await queryClient.invalidateQueries({ queryKey: ['admin-users'] });
    } catch (failure) {
      setError(failure);
    }
  };
  const set = (key: keyof typeof form) => (event: { target: { value: string } }) => setForm({ ...form, [key]: event.target.value });
  return (
    <section className="card" aria-labelledby="edit-person">
      <h2 id="edit-person">Edit {user.email}</h2>
      <form onSubmit={submit} className="stack-form" noValidate>
        <Field label="Email address" error={errors.email}>
          {(props) => <input type="email" {...props} value={form.email} onChange={set('email')} />}
        </Field>
        <Field label="Given name" error={errors.fname}>
          {(props) => <input {...props} value={form.fname} onChange={set('fname')} />}
        </Field>
        <Field label="Family name" error={errors.lname}>
          {(props) => <input {...props} value={form.lname} onChange={set('lname')} />}
        </Field>
        <Field label="Status" error={errors.status}>
          {(props) => (
            <select {...props} value={form.status} onChange={set('status')}>
              <option value="active">active</option>
              <option value="inactive">inactive</option>
              <option value="trialing">trialing</option>
            </select>
          )}
        </Field>
        <Field label="Credits" error={errors.credits}>
          {(props) => <input type="number" step="any" min={0} {...props} value={form.credits} onChange={set('credits')} />}
        </Field>
        <Field label="Account type" error={errors.accountType}>
          {(props) => (
            <select {...props} value={form.accountType} onChange={set('accountType')} disabled={user.accountType === 'super' && !makeSuper}>
              <option value="user">user</option>
              <option value="admin">admin</option>
              {(makeSuper || user.accountType === 'super') && <option value="super">super</option>}
            </select>
          )}
        </Field>
        <div className="button-row">
          <button type="submit">Save person</button>
          <button type="button" className="button-secondary" onClick={onClose}>
            Close
          </button>
        </div>
        {saved && <p role="status">{saved}</p>}
        {Object.keys(errors).length === 0 && <ErrorNotice error={error} />}
      </form>
      <Memberships user={user} makeSuper={makeSuper} />
    </section>
  );
}

function ResetFactor({ user }: { user: AdminUser }) {
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (!user.mfaEnabled) return null;
  return (
    <>
      <button
        type="button"
        className="button-link"
        onClick={async () => {
          setError(null);
          try {
            await adminSend('POST', `/api/admin/user/${user._id}/mfa/reset`);
            setDone('Authenticator reset.');
          } catch (failure) {
            setError(failure);
          }
        }}
      >
        Reset authenticator<span className="visually-hidden"> of {user.email}</span>
      </button>
      {done && <span role="status">{done}</span>}
      <ErrorNotice error={error} />
    </>
  );
}

function AddPerson() {
  const queryClient = useQueryClient();
  const empty = { email: '', fname: '', lname: '', password: '', role: 'user' as 'user' | 'admin' };
  const [form, setForm] = useState(empty);
  const [error, setError] = useState<unknown>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const errors = fieldErrors(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setOutcome(null);
    try {
      const body = { email: form.email, fname: form.fname || undefined, lname: form.lname || undefined, password: form.password || undefined, role: form.role };
      const answer = await unwrap(api.POST('/api/admin/user', { body }));
      const ignored = answer.ignoredFields ?? [];
      setOutcome(`${answer.data.email} is in this twin.${ignored.length ? ` Not applied (the account already existed): ${ignored.join(', ')}.` : ''}`);
      setForm(empty);
      await queryClient.invalidateQueries({ queryKey: ['admin-users'] });
    } catch (failure) {
      setError(failure);
    }
  };
  const set = (key: keyof typeof form) => (event: { target: { value: string } }) => setForm({ ...form, [key]: event.target.value });
  return (
    <details className="card">
      <summary>Add a person</summary>
      <form onSubmit={submit} className="stack-form" noValidate>
        <Field label="Email" error={errors.email}>
          {(props) => <input type="email" required {...props} value={form.email} onChange={set('email')} />}
        </Field>
        <Field label="First name" error={errors.fname}>
          {(props) => <input {...props} value={form.fname} onChange={set('fname')} />}
        </Field>
        <Field label="Last name" error={errors.lname}>
          {(props) => <input {...props} value={form.lname} onChange={set('lname')} />}
        </Field>
        <Field label="Password" error={errors.password} hint="At least 8 characters; leave empty to let them reset it.">
          {(props) => <input type="password" autoComplete="new-password" {...props} value={form.password} onChange={set('password')} />}
        </Field>
        <Field label="Role in this twin" error={errors.role}>
          {(props) => (
            <select {...props} value={form.role} onChange={set('role')}>
              <option value="user">User</option>
              <option value="admin">Administrator</option>
            </select>
          )}
        </Field>
        <button type="submit">Add person</button>
        {outcome && <p role="status">{outcome}</p>}
        {Object.keys(errors).length === 0 && <ErrorNotice error={error} />}
      </form>
    </details>
  );
}

function ImportPeople() {
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const [role, setRole] = useState<'user' | 'admin'>('user');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [answer, setAnswer] = useState<ImportAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const readFile = async (file: File | undefined) => {
    if (!file) return;
    const content = await file.text();
    setText(content);
    setPreview(previewCsv(content, role));
    setAnswer(null);
  };
  const send = async () => {
    setError(null);
    try {
      setAnswer(await unwrap(api.POST('/api/admin/users/import', { body: { csv: text, role } })));
      setPreview(null);
      await queryClient.invalidateQueries({ queryKey: ['admin-users'] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <details className="card">
      <summary>Import people from a CSV file</summary>
      <p className="muted">A header row of field names (email, fname, lname, password, role), then one person per line. A person who already has an account only joins this twin with the role chosen.</p>
      <div className="stack-form">
        <label>
          Role for rows that name none
          <select value={role} onChange={(event) => setRole(event.target.value as 'user' | 'admin')}>
            <option value="user">User</option>
            <option value="admin">Administrator</option>
          </select>
        </label>
        <label>
          CSV file
          <input type="file" accept=".csv,text/csv" onChange={(event) => readFile(event.target.files?.[0])} />
        </label>
      </div>
      {preview && (
        <section aria-label="Import preview">
          <h2>Preview</h2>
          {preview.problem && <p role="alert">{preview.problem}</p>}
          {preview.unknownColumns.length > 0 && <p>Columns not applied: {preview.unknownColumns.join(', ')}.</p>}
          <table>
            <caption className="visually-hidden">What each row will do</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Will</th>
              </tr>
            </thead>
            <tbody>
              {preview.rows.map((row) => (
                <tr key={row.line}>
                  <td>{row.line}</td>
                  <td>{row.email}</td>
                  <td>{row.name}</td>
                  <td>{row.problem ? `fail: ${row.problem}` : `create the account, or add the existing one, as ${row.role}`}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <button type="button" onClick={send} disabled={Boolean(preview.problem)}>
            Import {preview.rows.length} {preview.rows.length === 1 ? 'person' : 'people'}
          </button>
        </section>
      )}
      <ErrorNotice error={error} />
      {answer && (
        <section aria-label="Import result">
          <h2>Imported</h2>
          <p role="status">
            {answer.created} created, {answer.added} added, {answer.updated} updated, {answer.unchanged} unchanged, {answer.failed} failed.
          </p>
          <ul>
            {answer.results.map((row) => (
              <li key={row.row}>
                Row {row.row}, {row.email}: {row.outcome}
                {row.message ? ` (${row.message})` : ''}
                {row.ignoredFields && row.ignoredFields.length > 0 ? `; not applied: ${row.ignoredFields.join(', ')}` : ''}
              </li>
            ))}
          </ul>
        </section>
      )}
    </details>
  );
}
