// Suggested questions of the twin: shown on its chat start screen and in its branding. Adding, editing
// (its words, order and assistant), moving and removing them needs questions.edit; the list is
// searchable and paged.
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import type { AdminQuestion } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { useProfile } from '../session';
import { adminSend, bulkDelete, fieldErrors } from './admin-api';
import { actionsFor } from './families';
import { EditButton, SimpleForm } from './SimpleForm';
import { AdminList, Field } from './ui';

export default function Questions() {
  const profile = useProfile();
  const can = actionsFor(profile).questions;
  const [editing, setEditing] = useState<AdminQuestion | null>(null);
  return (
    <>
      <h1>Questions</h1>
      <p className="muted">Suggested questions appear on the chat's start screen of {profile.institution?.name ?? 'the twin'} and in its branding, smaller order first.</p>
      {can.edit && profile.institution && <AddQuestion />}
      {editing && (
        <SimpleForm
          key={editing._id}
          title={`Edit “${editing.text}”`}
          submitLabel="Save question"
          record={editing}
          fields={[
            { name: 'text', label: 'Question' },
            { name: 'order', label: 'Order', type: 'number' },
            { name: 'assistantId', label: 'Assistant id (empty: any)', nullable: true },
          ]}
          invalidate="admin-questions"
          send={(body) => adminSend('PUT', `/api/admin/question/${editing._id}`, body)}
          done={() => 'Saved.'}
          onClose={() => setEditing(null)}
        />
      )}
      <AdminList<AdminQuestion>
        title="Questions"
        path="/api/admin/questions"
        queryKey="admin-questions"
        rowLabel={(row) => row.text}
        bulk={can.edit ? [{ label: 'Delete', run: (ids) => bulkDelete('questions', ids), danger: true }] : []}
        columns={[
          { header: 'Question', cell: (row) => row.text },
          { header: 'Order', cell: (row) => row.order },
          { header: 'Assistant', cell: (row) => row.assistantId ?? 'any' },
        ]}
        rowActions={
          can.edit
            ? (row) => (
                <>
                  <EditButton label={`“${row.text}”`} onClick={() => setEditing(row)} /> <MoveQuestion question={row} />
                </>
              )
            : undefined
        }
      />
    </>
  );
}

/** Moves a question up or down the start screen (its order by one). */
function MoveQuestion({ question }: { question: AdminQuestion }) {
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const move = async (by: number) => {
    setError(null);
    try {
      await unwrap(api.PUT('/api/admin/question/{id}', { params: { path: { id: question._id } }, body: { order: question.order + by } }));
      await queryClient.invalidateQueries({ queryKey: ['admin-questions'] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <>
      <button type="button" className="button-link" onClick={() => move(-1)}>
        Earlier<span className="visually-hidden"> “{question.text}”</span>
      </button>{' '}
      <button type="button" className="button-link" onClick={() => move(1)}>
        Later<span className="visually-hidden"> “{question.text}”</span>
      </button>
      <ErrorNotice error={error} />
    </>
  );
}

function AddQuestion() {
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const [order, setOrder] = useState('0');
  const [error, setError] = useState<unknown>(null);
  const [added, setAdded] = useState<string | null>(null);
  const errors = fieldErrors(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setAdded(null);
    try {
      const answer = await unwrap(api.POST('/api/admin/question', { body: { text, order: Number(order) || 0 } }));
      setAdded(`Added “${answer.data.text}”.`);
      setText('');
      await queryClient.invalidateQueries({ queryKey: ['admin-questions'] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form className="card stack-form" onSubmit={submit} noValidate aria-label="Add a question">
      <Field label="New question" error={errors.text}>
        {(props) => <input {...props} value={text} onChange={(event) => setText(event.target.value)} />}
      </Field>
      <Field label="Order" error={errors.order}>
        {(props) => <input type="number" {...props} value={order} onChange={(event) => setOrder(event.target.value)} />}
      </Field>
      <button type="submit">Add question</button>
      {added && <p role="status">{added}</p>}
      {Object.keys(errors).length === 0 && <ErrorNotice error={error} />}
    </form>
  );
}
