/**
 * Counts the statements the store runs, for operators and for the scale bench (issue 29: statements
 * and run reads per episode). Off unless the coordinator's `storeStatementMetrics` option is set
 * (ASSAY_STORE_STATEMENT_METRICS=1): then the composition root passes `countStatement` to
 * openDatabase, and each engine calls it once per statement it sends (BEGIN, COMMIT and savepoints
 * included, since each is a round trip on PostgreSQL). Off, the engines hold no hook and pay one
 * `undefined` check per statement.
 *
 *  - `assay_store_statements_total{engine, verb}`: verb is select, insert, update, delete,
 *    transaction (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE) or other.
 *  - `assay_store_run_reads_total`: reads of one run's row (getRun, the reads that lock the run as
 *    they read it, and getRunView's for GET /v1/runs/{run_id}), the read the episode path carries
 *    instead of repeating.
 */
import { Counter, type Registry } from "prom-client";
import type { Dialect } from "./db.js";
import { RUN_ROW_READS } from "./run-row-sql.js";

/** Called by an engine for each statement it sends, with its SQL text as the repository wrote it. */
export type StatementHook = (sql: string) => void;

type Verb = "select" | "insert" | "update" | "delete" | "transaction" | "other";

/** The verb of a SQL text (its first keyword; a WITH is read as what follows its last parenthesis). */
function verbOf(sql: string): Verb {
  const text = sql.trimStart().replace(/^with\b[\s\S]*\)\s*/i, "");
  const word = /^[a-z]+/i.exec(text)?.[0]?.toLowerCase();
  switch (word) {
    case "select": case "insert": case "update": case "delete":
      return word;
    case "begin": case "commit": case "rollback": case "savepoint": case "release":
      return "transaction";
    default:
      return "other";
  }
}

/** Distinct SQL texts whose verb is remembered; past this many, the verb is worked out per call. */
const VERB_CACHE_LIMIT = 2000;

/** Registers the counters on `registry` and returns the hook that feeds them. */
export function storeStatementMetrics(registry: Registry, engine: Dialect): StatementHook {
  const statements = new Counter({
    name: "assay_store_statements_total",
    help: "SQL statements the store sent, by engine and verb (transaction: BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE)",
    labelNames: ["engine", "verb"],
    registers: [registry],
  });
  const runReads = new Counter({ name: "assay_store_run_reads_total", help: "Reads of one run's whole row (getRun and the locking reads of a run)", registers: [registry] });
  const byVerb = new Map<Verb, Counter.Internal>();
  const verbs = new Map<string, Verb>();
  return (sql) => {
    let verb = verbs.get(sql);
    if (verb === undefined) {
      verb = verbOf(sql);
      if (verbs.size < VERB_CACHE_LIMIT) verbs.set(sql, verb);
    }
    let counter = byVerb.get(verb);
    if (!counter) byVerb.set(verb, counter = statements.labels({ engine, verb }));
    counter.inc();
    if (RUN_ROW_READS.has(sql)) runReads.inc();
  };
}
