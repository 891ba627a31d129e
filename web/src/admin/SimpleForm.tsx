// A small form of text, number, password, choice, list and date fields, sent as one JSON body: the
// service's field errors show at each field, a secret field is never filled from a stored value, and the
// outcome is announced. A create form folds away (details); an edit form starts from the record's
// values and sends only what changed (form-body.ts).
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorNotice } from '../components/ErrorNotice';
import { buildBody, initialValues, optionValue, type FieldSpec } from './form-body';
import { fieldErrors } from './field-errors';
import { Field } from './ui';

export type { FieldSpec } from './form-body';

export function SimpleForm({
  title,
  fields,
  submitLabel,
  send,
  invalidate,
  done,
  record,
  defaults,
  onClose,
}: {
  title: string;
  fields: FieldSpec[];
  submitLabel: string;
  send: (body: Record<string, any>) => Promise<unknown>;
  invalidate: string;
  done: (body: Record<string, any>) => string;
  /** Given: an edit form of this record (its values shown, only changes sent). */
  record?: Record<string, unknown>;
  /** A create form's starting values where not empty. */
  defaults?: Record<string, string>;
  onClose?: () => void;
}) {
  const queryClient = useQueryClient();
  const [start, setStart] = useState(() => ({ ...initialValues(fields, record), ...defaults }));
  const [values, setValues] = useState(start);
  const [error, setError] = useState<unknown>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const errors = fieldErrors(error);
  const editing = record !== undefined;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setOutcome(null);
    const body = buildBody(fields, values, editing ? start : undefined);
    try {
      await send(body);
      setOutcome(done(body));
      // Saved values are the new starting point; a secret field empties again (never shown back).
      const next = editing ? { ...values, ...Object.fromEntries(fields.filter((field) => field.type === 'password').map((field) => [field.name, ''])) } : { ...initialValues(fields), ...defaults };
      if (editing) setStart(next);
      setValues(next);
      await queryClient.invalidateQueries({ queryKey: [invalidate] });
    } catch (failure) {
      setError(failure);
    }
  };
  const set = (name: string) => (event: { target: { value: string } }) => setValues({ ...values, [name]: event.target.value });
  const form = (
    <form onSubmit={submit} className="stack-form" noValidate>
      {fields.map((field) => (
        <Field key={field.name} label={field.label} error={errors[field.name]} hint={field.hint}>
          {(props) =>
            field.type === 'select' ? (
              <select {...props} value={values[field.name]} onChange={set(field.name)}>
                {editing && values[field.name] === '' && <option value="">—</option>}
                {field.options?.map((option) => (
                  <option key={optionValue(option)} value={optionValue(option)}>
                    {typeof option === 'string' ? option : option.label}
                  </option>
                ))}
              </select>
            ) : field.type === 'textarea' ? (
              <textarea {...props} rows={4} value={values[field.name]} onChange={set(field.name)} />
            ) : (
              <input
                type={field.type === 'datetime' ? 'datetime-local' : field.type === 'list' ? 'text' : (field.type ?? 'text')}
                autoComplete={field.type === 'password' ? 'off' : undefined}
                {...props}
                value={values[field.name]}
                onChange={set(field.name)}
              />
            )
          }
        </Field>
      ))}
      <div className="button-row">
        <button type="submit">{submitLabel}</button>
        {onClose && (
          <button type="button" className="button-secondary" onClick={onClose}>
            Close
          </button>
        )}
      </div>
      {outcome && <p role="status">{outcome}</p>}
      {Object.keys(errors).length === 0 && <ErrorNotice error={error} />}
    </form>
  );
  if (editing)
    return (
      <section className="card" aria-label={title}>
        <h2>{title}</h2>
        {form}
      </section>
    );
  return (
    <details className="card">
      <summary>{title}</summary>
      {form}
    </details>
  );
}

/** A row's Edit button: names the row for screen readers ("Edit Calendar"). */
export function EditButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <button type="button" className="button-link" onClick={onClick}>
      Edit<span className="visually-hidden"> {label}</span>
    </button>
  );
}
