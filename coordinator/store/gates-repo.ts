/** CI gates and their checks: rows of `gates` and `gate_checks` (coordinator/gates/gates.ts decides the checks). */
import type { Db } from "./database.js";

export interface GateSpec {
  suite: string;
  repo: string;
  ref_pattern: string;
  policy: Record<string, unknown>;
  robots: string[];
  baseline: "last_pass";
}

/** A gate: its owner and the spec it was created with. */
export interface GateRecord {
  id: string;
  account_id: string;
  created: string;
  spec: GateSpec;
}

export interface GateCheckRow {
  id: string;
  gate_id: string;
  account_id: string;
  created: string;
  ref: string;
  commit_sha: string | null;
  run_id: string;
  status: "pending" | "passed" | "failed";
  /** JSON {regression, baseline_run_id, detail} once decided. */
  decided: string | null;
  decided_at: string | null;
}

/** A check as the coordinator reads it: `decided` parsed. */
export type GateCheckRecord = Omit<GateCheckRow, "decided"> & { decided: { regression: unknown; baseline_run_id: string | null; detail: string } | null };

const checkRecordOf = (row: GateCheckRow): GateCheckRecord => ({ ...row, decided: row.decided === null ? null : JSON.parse(row.decided) });
const gateRecordOf = (row: { id: string; account_id: string; created: string; spec: string }): GateRecord => ({ ...row, spec: JSON.parse(row.spec) as GateSpec });

export function insertGate(db: Db, gate: GateRecord): void {
  db.prepare("INSERT INTO gates (id, account_id, created, spec) VALUES (@id, @account_id, @created, @spec)").run({ ...gate, spec: JSON.stringify(gate.spec) });
}

export function getGate(db: Db, id: string): GateRecord | undefined {
  const row = db.prepare("SELECT * FROM gates WHERE id = ?").get(id) as { id: string; account_id: string; created: string; spec: string } | undefined;
  return row ? gateRecordOf(row) : undefined;
}

export function listGates(db: Db, accountId: string): GateRecord[] {
  return (db.prepare("SELECT * FROM gates WHERE account_id = ? ORDER BY created DESC, id DESC").all(accountId) as Array<{ id: string; account_id: string; created: string; spec: string }>).map(gateRecordOf);
}

export function insertCheck(db: Db, row: Omit<GateCheckRow, "decided" | "decided_at" | "status">): void {
  db.prepare(
    `INSERT INTO gate_checks (id, gate_id, account_id, created, ref, commit_sha, run_id, status)
     VALUES (@id, @gate_id, @account_id, @created, @ref, @commit_sha, @run_id, 'pending')`,
  ).run(row);
}

export function getCheck(db: Db, id: string): GateCheckRecord | undefined {
  const row = db.prepare("SELECT * FROM gate_checks WHERE id = ?").get(id) as GateCheckRow | undefined;
  return row ? checkRecordOf(row) : undefined;
}

/** The run of the gate's most recently passed check other than `exceptCheckId` (the baseline), or undefined. */
export function findLastPassedRunId(db: Db, gateId: string, exceptCheckId: string): string | undefined {
  const row = db
    .prepare("SELECT run_id FROM gate_checks WHERE gate_id = ? AND status = 'passed' AND id != ? ORDER BY decided_at DESC, created DESC LIMIT 1")
    .get(gateId, exceptCheckId) as { run_id: string } | undefined;
  return row?.run_id;
}

/** Records the decision of a check still pending (a decided check is left as it is). */
export function decidePendingCheck(db: Db, checkId: string, status: "passed" | "failed", decided: string, at: string): void {
  db.prepare("UPDATE gate_checks SET status = ?, decided = ?, decided_at = ? WHERE id = ? AND status = 'pending'").run(status, decided, at, checkId);
}

/** The run's checks still pending. */
export function listPendingChecksOfRun(db: Db, runId: string): GateCheckRow[] {
  return db.prepare("SELECT * FROM gate_checks WHERE run_id = ? AND status = 'pending'").all(runId) as GateCheckRow[];
}
