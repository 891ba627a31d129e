// The SQLSTATE of a database error, from pg or PGlite, directly or as the cause drizzle wraps it in.
export function sqlStateOf(error: unknown): string | undefined {
  const seen = error as { code?: unknown; cause?: { code?: unknown } } | null | undefined;
  const code = seen?.code ?? seen?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A unique constraint refused the write (23505). */
export function isUniqueViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23505';
}
