// What a CSV import will do, read in the page before anything is sent: a header row of
// POST /api/admin/user's field names, then one person per line. Each row says what the service will do
// with it (behaviour 2: a known email only joins this twin with the chosen role) or why it will fail.

const KNOWN = ['email', 'fname', 'lname', 'password', 'accountType', 'role'] as const;
export type PreviewRow = { line: number; email: string; name: string; role: string; problem?: string };

export function readCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const input = text.replace(/^\uFEFF/, '');
  const endRow = () => {
    row.push(field);
    if (row.some((value) => value.trim() !== '')) rows.push(row);
    row = [];
    field = '';
  };
  for (let i = 0; i < input.length; i++) {
    const char = input[i];
    if (quoted) {
      if (char === '"' && input[i + 1] === '"') field += input[++i];
      else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field === '') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && input[i + 1] === '\n') i++;
      endRow();
    } else field += char;
  }
  endRow();
  return rows;
}

export interface Preview {
  rows: PreviewRow[];
  /** Header columns the service does not apply (reported back as ignoredFields). */
  unknownColumns: string[];
  /** The file cannot be imported at all (no email column, no rows). */
  problem?: string;
}

export function previewCsv(text: string, defaultRole: string): Preview {
  const [header, ...lines] = readCsv(text);
  if (!header) return { rows: [], unknownColumns: [], problem: 'The file is empty.' };
  const columns = header.map((name) => name.trim());
  const unknownColumns = columns.filter((name) => name && !(KNOWN as readonly string[]).includes(name));
  if (!columns.includes('email')) return { rows: [], unknownColumns, problem: 'The header row has no email column.' };
  if (lines.length === 0) return { rows: [], unknownColumns, problem: 'The file has a header row but no people.' };
  const at = (line: string[], name: string) => (line[columns.indexOf(name)] ?? '').trim();
  const rows = lines.map((line, index) => {
    const email = at(line, 'email');
    const role = at(line, 'role') || defaultRole;
    const password = at(line, 'password');
    const row: PreviewRow = { line: index + 1, email, name: [at(line, 'fname'), at(line, 'lname')].filter(Boolean).join(' '), role };
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) row.problem = 'not an email address';
    else if (!['user', 'admin'].includes(role)) row.problem = `role must be user or admin, not ${role}`;
    else if (password && password.length < 8) row.problem = 'password shorter than 8 characters';
    return row;
  });
  return { rows, unknownColumns };
}
