// Drizzle refuses an UPDATE with nothing to set ("No values to set"), and treats an undefined value
// as not given. A PUT whose body names no known field is a change of nothing: the update helpers ask
// this first and answer the row as it is instead.

/** Does the update set at least one column? */
export function setsSomething(values: object): boolean {
  return Object.values(values).some((value) => value !== undefined);
}
