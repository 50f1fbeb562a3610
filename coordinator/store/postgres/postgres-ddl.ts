/**
 * The SQLite migrations (../migrations.ts) as PostgreSQL runs them. Every statement in them is
 * also valid PostgreSQL, but three types mean something else there, so each migration's text is
 * rewritten, token by token, before it runs:
 *
 * - INTEGER is 64-bit in SQLite and 32-bit in PostgreSQL (byte counts, seeds overflow): BIGINT.
 * - REAL is an 8-byte float in SQLite and a 4-byte one in PostgreSQL (0.1 reads back as
 *   0.10000000149011612): DOUBLE PRECISION.
 * - TEXT compares bytewise in SQLite; in PostgreSQL it follows the database's collation
 *   (en_US.UTF-8 sorts `run_b` before `Run_c`), which would reorder every `created, id` cursor:
 *   TEXT COLLATE "C".
 *
 * The migrations are frozen once committed, so this rewrite meets only the texts the tests apply
 * (test/unit/postgres-migrations.spec.ts checks the resulting column types).
 */

/** Rewrites one SQLite migration for PostgreSQL; comments are dropped. */
export function postgresDdl(sqliteDdl: string): string {
  return sqliteDdl
    .replace(/--[^\n]*/g, "")
    .replace(/\bINTEGER\b/g, "BIGINT")
    .replace(/\bREAL\b/g, "DOUBLE PRECISION")
    .replace(/\bTEXT\b/g, 'TEXT COLLATE "C"');
}
