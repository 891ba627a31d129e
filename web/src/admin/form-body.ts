// What a console form holds (text per field) and the JSON body it sends. A create form sends the fields
// filled in; an edit form sends what changed (a secret only when typed: a stored one is never shown or
// sent back), a cleared nullable field as null, and a nested group ("caps.dailyTurns") whole when any
// of its fields changed, since the service replaces the group.

export interface FieldSpec {
  /** The wire's name; "group.name" for a field of a nested object. */
  name: string;
  label: string;
  type?: 'text' | 'email' | 'url' | 'number' | 'password' | 'select' | 'textarea' | 'list' | 'datetime';
  /** A choice's options: the wire's value, or a value with the words shown for it. */
  options?: Array<string | { value: string; label: string }>;
  hint?: string;
  /** Cleared in an edit form, it is sent as null (e.g. "no limit", "no expiry"). */
  nullable?: boolean;
}

export type FormValues = Record<string, string>;

function read(record: Record<string, unknown> | undefined, name: string): unknown {
  let value: unknown = record;
  for (const key of name.split('.')) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

export const optionValue = (option: string | { value: string }) => (typeof option === 'string' ? option : option.value);

/** The text each field starts with: empty (a choice: its first option), or the record's value; never a secret. */
export function initialValues(fields: FieldSpec[], record?: Record<string, unknown>): FormValues {
  const values: FormValues = {};
  for (const field of fields) {
    const value = field.type === 'password' ? undefined : read(record, field.name);
    const first = field.options?.[0];
    if (value === undefined || value === null) values[field.name] = field.type === 'select' && !record && first !== undefined ? optionValue(first) : '';
    else if (Array.isArray(value)) values[field.name] = value.join(', ');
    else if (field.type === 'datetime') values[field.name] = String(value).slice(0, 16);
    else values[field.name] = String(value);
  }
  return values;
}

function wireValue(field: FieldSpec, text: string): unknown {
  if (text.trim() === '') return field.type === 'list' ? [] : null;
  switch (field.type) {
    case 'number':
      return Number(text);
    case 'list':
      return text.split(',').map((item) => item.trim()).filter(Boolean);
    case 'datetime':
      // The input shows UTC (its label says so); the wire takes an ISO date-time.
      return Number.isNaN(Date.parse(`${text}Z`)) ? text : new Date(`${text}Z`).toISOString();
    default:
      return text;
  }
}

/** The body to send: every filled field (create), or the changed ones (edit, given the starting values). */
export function buildBody(fields: FieldSpec[], values: FormValues, initial?: FormValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const put = (name: string, value: unknown) => {
    const [group, key] = name.split('.');
    if (key === undefined) body[group] = value;
    else body[group] = { ...(body[group] as Record<string, unknown> | undefined), [key]: value };
  };
  const changedGroups = new Set<string>();
  for (const field of fields) {
    const text = values[field.name] ?? '';
    const empty = text.trim() === '';
    if (!initial) {
      if (!empty) put(field.name, wireValue(field, text));
      continue;
    }
    if (field.type === 'password') {
      if (!empty) put(field.name, text);
      continue;
    }
    if (text === initial[field.name]) continue;
    if (field.name.includes('.')) changedGroups.add(field.name.split('.')[0]);
    else if (!empty || field.nullable || field.type === 'list') put(field.name, wireValue(field, text));
    // A cleared text goes as '' (the service says whether it may be empty); a cleared number or choice is not sent.
    else if (!field.type || field.type === 'text' || field.type === 'textarea' || field.type === 'url' || field.type === 'email') put(field.name, '');
  }
  // A nested group is sent whole: the service replaces it.
  for (const field of fields) {
    const group = field.name.split('.')[0];
    if (field.name.includes('.') && changedGroups.has(group)) put(field.name, wireValue(field, values[field.name] ?? ''));
  }
  return body;
}
