/** An error PostgreSQL returned; `code` is its SQLSTATE (23505: unique violation, 40P01: deadlock). */
export class PostgresError extends Error {
  readonly code: string | undefined;
  readonly constraint: string | undefined;
  constructor(message: string, code?: string, detail?: string, constraint?: string) {
    super(detail ? `${message} (${detail})` : message);
    this.name = "PostgresError";
    this.code = code;
    this.constraint = constraint;
  }
}

/** `error` from pg as a PostgresError (with its SQLSTATE), or as it is when it did not come from the server. */
export function postgresError(error: unknown): Error {
  if (error instanceof PostgresError) return error;
  const e = error as { message?: string; code?: string; detail?: string; constraint?: string };
  if (error instanceof Error && typeof e.code === "string") return new PostgresError(error.message, e.code, e.detail, e.constraint);
  return error instanceof Error ? error : new Error(String(error));
}
