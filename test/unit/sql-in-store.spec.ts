/**
 * The store owns every SQL statement (STYLE.md, docs/store.md): outside coordinator/store/, no
 * production file of the coordinator prepares or executes a statement, or holds a string literal that
 * reads as SQL. A route, kind or worker calls a repository's named function instead.
 *
 * What counts as SQL here:
 * - a `.prepare(` call (the Db's statement constructor);
 * - an `.exec(` call on a string literal or on a receiver named like a database (`db.exec(`, `ctx.db.exec(`),
 *   so a RegExp's `exec(text)` is not taken for SQL;
 * - a string literal (quotes or backticks) starting with `SELECT `, `INSERT INTO`, `UPDATE x SET`,
 *   `DELETE FROM` or `WITH x AS`, in capitals, as the repositories write them (an HTTP method such as
 *   "DELETE" or "DELETE /v1/..." is not SQL).
 * Comments are skipped. Spec files are skipped (tests may read the store directly).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { productionSources, REPO_ROOT, withoutComments } from "../support/source-scan.js";

const STORE = "coordinator/store/";

const PREPARE = /\.prepare\s*\(/;
const DB_EXEC = /(?:\.exec\s*\(\s*["'`])|(?:\b\w*db\s*\.\s*exec\s*\()/i;
const SQL_LITERAL = /["'`]\s*(?:SELECT\s|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|WITH\s+(?:RECURSIVE\s+)?\w+\s+AS\b)/;

/** Every place in `source` that looks like SQL, as "line: text" (a statement may start on the line after its quote). */
export function sqlSites(source: string): string[] {
  const text = withoutComments(source);
  const lines = text.split("\n");
  const found = new Set<number>();
  for (const pattern of [PREPARE, DB_EXEC, SQL_LITERAL]) {
    for (const match of text.matchAll(new RegExp(pattern.source, `${pattern.flags}g`))) {
      found.add(text.slice(0, match.index).split("\n").length);
    }
  }
  return [...found].sort((a, b) => a - b).map((line) => `${line}: ${lines[line - 1].trim().slice(0, 120)}`);
}

describe("SQL lives in coordinator/store/", () => {
  it("the detector sees statements and leaves HTTP methods, regular expressions and comments alone", () => {
    assert.equal(sqlSites(`db.prepare("SELECT 1").get();`).length, 1);
    assert.equal(sqlSites("const q = `\n  INSERT INTO runs (id) VALUES (?)`;").length, 1);
    assert.equal(sqlSites(`ctx.db.exec(sql);`).length, 1);
    assert.equal(sqlSites(`const s = "UPDATE runs SET status = ?";`).length, 1);
    assert.equal(sqlSites(`const s = 'DELETE FROM runs';`).length, 1);
    assert.equal(sqlSites("const s = `WITH recent AS (SELECT 1)`;").length, 1);
    assert.deepEqual(sqlSites(`const m = /^a$/.exec(text); // db.prepare("SELECT 1")`), []);
    assert.deepEqual(sqlSites(`const route = { method: "DELETE", path: "/v1/keys/:id" }; say("DELETE /v1/cells/{id}");`), []);
    assert.deepEqual(sqlSites(`/* SELECT * FROM runs */ const selected = "Select a run";`), []);
  });

  it("no production file outside coordinator/store/ prepares, executes or spells a statement", () => {
    const offenders: string[] = [];
    for (const path of productionSources("coordinator")) {
      const file = path.split("\\").join("/");
      if (file.startsWith(STORE)) continue;
      for (const site of sqlSites(readFileSync(join(REPO_ROOT, path), "utf8"))) offenders.push(`${file}:${site}`);
    }
    assert.deepEqual(offenders, [], `SQL outside ${STORE} (move it into a repository there, as a named function):\n${offenders.join("\n")}`);
  });
});
