/** CI gates and their checks: rows of `gates` and `gate_checks` (coordinator/kinds/gates.ts decides the checks). */
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

export async function insertGate(db: Db, gate: GateRecord): Promise<void> {
  await db.prepare("INSERT INTO gates (id, account_id, created, spec) VALUES (@id, @account_id, @created, @spec)").run({ ...gate, spec: JSON.stringify(gate.spec) });
}

export async function getGate(db: Db, id: string): Promise<GateRecord | undefined> {
  const row = await db.prepare("SELECT * FROM gates WHERE id = ?").get(id) as { id: string; account_id: string; created: string; spec: string } | undefined;
  return row ? gateRecordOf(row) : undefined;
}

export async function listGates(db: Db, accountId: string): Promise<GateRecord[]> {
  return (await db.prepare("SELECT * FROM gates WHERE account_id = ? ORDER BY created DESC, id DESC").all(accountId) as Array<{ id: string; account_id: string; created: string; spec: string }>).map(gateRecordOf);
}

export async function insertCheck(db: Db, row: Omit<GateCheckRow, "decided" | "decided_at" | "status">): Promise<void> {
  await db.prepare(
    `INSERT INTO gate_checks (id, gate_id, account_id, created, ref, commit_sha, run_id, status)
     VALUES (@id, @gate_id, @account_id, @created, @ref, @commit_sha, @run_id, 'pending')`,
  ).run(row);
}

export async function getCheck(db: Db, id: string): Promise<GateCheckRecord | undefined> {
  const row = await db.prepare("SELECT * FROM gate_checks WHERE id = ?").get(id) as GateCheckRow | undefined;
  return row ? checkRecordOf(row) : undefined;
}

/** The run of the gate's most recently passed check other than `exceptCheckId` (the baseline), or undefined. */
export async function findLastPassedRunId(db: Db, gateId: string, exceptCheckId: string): Promise<string | undefined> {
  const row = await db
    .prepare("SELECT run_id FROM gate_checks WHERE gate_id = ? AND status = 'passed' AND id != ? ORDER BY decided_at DESC, created DESC LIMIT 1")
    .get(gateId, exceptCheckId) as { run_id: string } | undefined;
  return row?.run_id;
}

/** Records the decision of a check still pending (a decided check is left as it is). */
export async function decidePendingCheck(db: Db, checkId: string, status: "passed" | "failed", decided: string, at: string): Promise<void> {
  await db.prepare("UPDATE gate_checks SET status = ?, decided = ?, decided_at = ? WHERE id = ? AND status = 'pending'").run(status, decided, at, checkId);
}

/** The run's checks still pending. */
export async function listPendingChecksOfRun(db: Db, runId: string): Promise<GateCheckRow[]> {
  return await db.prepare("SELECT * FROM gate_checks WHERE run_id = ? AND status = 'pending'").all(runId) as GateCheckRow[];
}
