// A small RFC 4180 CSV reader: quoted fields (with "" for a quote, commas and line breaks inside),
// CRLF or LF line ends, a leading byte-order mark. Returns rows of fields; blank lines are skipped.

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const input = text.replace(/^\uFEFF/, '');
  for (let i = 0; i < input.length; i++) {
    const char = input[i];
    if (quoted) {
      if (char === '"' && input[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        field += char;
      }
    } else if (char === '"' && field === '') {
      quoted = true;
    } else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && input[i + 1] === '\n') i++;
      row.push(field);
      if (row.some((value) => value.trim() !== '')) rows.push(row);
      row = [];
      field = '';
    } else {
      field += char;
    }
  }
  row.push(field);
  if (row.some((value) => value.trim() !== '')) rows.push(row);
  return rows;
}

const HEADER_ALIASES: Record<string, 'email' | 'fname' | 'lname' | 'password' | 'accountType' | 'role'> = {
  email: 'email',
  emailaddress: 'email',
  fname: 'fname',
  firstname: 'fname',
  lname: 'lname',
  lastname: 'lname',
  password: 'password',
  accounttype: 'accountType',
  role: 'role',
};

export type CsvPerson = Partial<Record<'email' | 'fname' | 'lname' | 'password' | 'accountType' | 'role', string>>;

/** Rows of people from CSV text whose first line names the columns; unknown columns are ignored. */
export function peopleFromCsv(text: string): { people: CsvPerson[]; unknownColumns: string[] } {
  const [header, ...rows] = parseCsv(text);
  if (!header) return { people: [], unknownColumns: [] };
  const keys = header.map((name) => HEADER_ALIASES[name.trim().toLowerCase().replace(/[\s_-]/g, '')]);
  const unknownColumns = header.filter((_, index) => !keys[index]).map((name) => name.trim());
  const people = rows.map((cells) => {
    const person: CsvPerson = {};
    keys.forEach((key, index) => {
      const value = cells[index]?.trim();
      if (key && value) person[key] = value;
    });
    return person;
  });
  return { people, unknownColumns };
}
