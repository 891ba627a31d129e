// A small form of text, number, password and choice fields, sent as one JSON body: the service's field
// errors show at each field, a secret field is never filled from a stored value, and the outcome is
// announced. Used for the families whose create form is a handful of fields.
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorNotice } from '../components/ErrorNotice';
import { fieldErrors } from './field-errors';
import { Field } from './ui';

export interface FieldSpec {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'url' | 'number' | 'password' | 'select';
  options?: string[];
  hint?: string;
}

export function SimpleForm({
  title,
  fields,
  submitLabel,
  send,
  invalidate,
  done,
}: {
  title: string;
  fields: FieldSpec[];
  submitLabel: string;
  send: (body: Record<string, string | number>) => Promise<unknown>;
  invalidate: string;
  done: (body: Record<string, string | number>) => string;
}) {
  const queryClient = useQueryClient();
  const empty = Object.fromEntries(fields.map((field) => [field.name, field.type === 'select' ? (field.options?.[0] ?? '') : '']));
  const [values, setValues] = useState<Record<string, string>>(empty);
  const [error, setError] = useState<unknown>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const errors = fieldErrors(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setOutcome(null);
    const body: Record<string, string | number> = {};
    for (const field of fields) {
      const value = values[field.name];
      if (value === '') continue;
      body[field.name] = field.type === 'number' ? Number(value) : value;
    }
    try {
      await send(body);
      setOutcome(done(body));
      setValues(empty);
      await queryClient.invalidateQueries({ queryKey: [invalidate] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <details className="card">
      <summary>{title}</summary>
      <form onSubmit={submit} className="stack-form" noValidate>
        {fields.map((field) => (
          <Field key={field.name} label={field.label} error={errors[field.name]} hint={field.hint}>
            {(props) =>
              field.type === 'select' ? (
                <select {...props} value={values[field.name]} onChange={(event) => setValues({ ...values, [field.name]: event.target.value })}>
                  {field.options?.map((option) => (
                    <option key={option}>{option}</option>
                  ))}
                </select>
              ) : (
                <input
                  type={field.type ?? 'text'}
                  autoComplete={field.type === 'password' ? 'off' : undefined}
                  {...props}
                  value={values[field.name]}
                  onChange={(event) => setValues({ ...values, [field.name]: event.target.value })}
                />
              )
            }
          </Field>
        ))}
        <button type="submit">{submitLabel}</button>
        {outcome && <p role="status">{outcome}</p>}
        {Object.keys(errors).length === 0 && <ErrorNotice error={error} />}
      </form>
    </details>
  );
}
