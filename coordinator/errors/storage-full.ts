/**
 * Recognises "out of storage" failures wherever they come from, so they are answered as the
 * service being unavailable for a while (503 service_unavailable with Retry-After) rather than as
 * a coordinator bug: SQLite's SQLITE_FULL (the database file or its disk is full), PostgreSQL's
 * disk_full (SQLSTATE 53100), and ENOSPC or EDQUOT from the artifact store's disk.
 */

/** Error codes that mean the store ran out of room: SQLite, PostgreSQL SQLSTATE, errno. */
export const STORAGE_FULL_CODES: ReadonlySet<string> = new Set(["SQLITE_FULL", "53100", "ENOSPC", "EDQUOT"]);

/** Whether `error`, or an error in its `cause` chain, says the storage is full. */
export function isStorageFull(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && STORAGE_FULL_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
