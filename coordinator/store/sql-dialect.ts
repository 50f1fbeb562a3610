/**
 * The few SQL forms SQLite and PostgreSQL spell differently, for statements that must run on both.
 * JSON columns are stored as text on both engines (kept exactly as submitted), so reading inside
 * them goes through these helpers. Paths are fixed identifiers written in the code, never input.
 */
import type { Db } from "./database.js";

/** `expr`'s JSON value at `path` as text (a string unquoted), or NULL when absent. */
export function jsonText(db: Db, expr: string, ...path: string[]): string {
  checkPath(path);
  return db.dialect === "postgres" ? `((${expr})::jsonb #>> '{${path.join(",")}}')` : `json_extract(${expr}, '$.${path.join(".")}')`;
}

/** True when `expr`'s JSON value at `path` is `true`; false when it is anything else or absent. */
export function jsonIsTrue(db: Db, expr: string, ...path: string[]): string {
  checkPath(path);
  return db.dialect === "postgres"
    ? `(((${expr})::jsonb #> '{${path.join(",")}}') IS NOT DISTINCT FROM 'true'::jsonb)`
    : `(json_type(${expr}, '$.${path.join(".")}') IS 'true')`;
}

/**
 * A FROM item with one row per element of the JSON array at `key` in `expr`, named `alias`; read
 * an element with `jsonElementText` (a string) or `jsonText(db, jsonElement(db, alias), ...)`.
 */
export function jsonArrayElements(db: Db, expr: string, key: string, alias: string): string {
  checkPath([key, alias]);
  return db.dialect === "postgres"
    ? `jsonb_array_elements(COALESCE((${expr})::jsonb -> '${key}', '[]'::jsonb)) AS ${alias}(value)`
    : `json_each(${expr}, '$.${key}') AS ${alias}`;
}

/** Like `jsonArrayElements`, for the values of the JSON object at `key`. */
export function jsonObjectValues(db: Db, expr: string, key: string, alias: string): string {
  checkPath([key, alias]);
  return db.dialect === "postgres"
    ? `jsonb_each(COALESCE((${expr})::jsonb -> '${key}', '{}'::jsonb)) AS ${alias}(key, value)`
    : `json_each(${expr}, '$.${key}') AS ${alias}`;
}

/** The element of a `jsonArrayElements` or `jsonObjectValues` row, as JSON. */
export function jsonElement(alias: string): string {
  return `${alias}.value`;
}

/** A string element of a `jsonArrayElements` row, as text. */
export function jsonElementText(db: Db, alias: string): string {
  return db.dialect === "postgres" ? `(${alias}.value #>> '{}')` : `${alias}.value`;
}

/**
 * The column that orders a table's rows as they were written: SQLite's rowid; on PostgreSQL, a
 * `seq` identity column that the table must have (migrations.ts adds it where it is used).
 */
export function insertionOrder(db: Db): string {
  return db.dialect === "postgres" ? "seq" : "rowid";
}

/**
 * `column` is one of the integers in the JSON array bound at one `?` (a text such as "[4,5,9]"): one statement
 * text, so one prepared statement, whatever the list's length. On PostgreSQL the list becomes an array once
 * (`= ANY(ARRAY(...))`), which an index on the column serves; an `IN (SELECT ...)` of the set-returning
 * function was planned as a scan of the run's rows (225 ms at 10,000 episodes against 50 ms for them all).
 */
export function inIntegersOfJsonParam(db: Db, column: string): string {
  return db.dialect === "postgres"
    ? `${column} = ANY(ARRAY(SELECT (jsonb_array_elements_text(?::jsonb))::bigint))`
    : `${column} IN (SELECT value FROM json_each(?))`;
}

function checkPath(path: string[]): void {
  for (const part of path) if (!/^[a-z_][a-z0-9_]*$/i.test(part)) throw new Error(`a JSON path part must be an identifier; got ${JSON.stringify(part)}`);
}
