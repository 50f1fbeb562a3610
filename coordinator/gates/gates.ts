/**
 * CI gates. A gate runs a frozen suite (kind `eval`) on the refs of a repository that match its
 * `ref_pattern` and fails the check when the new build regresses against the baseline: the run of
 * the gate's most recent passed check (`baseline: "last_pass"`, the only rule so far).
 *
 * Check states: pending -> passed | failed, decided once, when its eval run ends:
 * - run completed, no baseline yet: passed (this run becomes the baseline);
 * - run completed: each unit (robot x suite task) is compared with the same unit of the baseline
 *   run with `detectRegressions` (one-sided Fisher exact per unit, margin 0, Holm-adjusted over the
 *   check's units so a check fails falsely with probability <= alpha 0.05); any regression fails
 *   the check and emits webhook `regression.detected` (source "gate");
 * - run failed or stopped: failed, `regression` null, `detail` names the run's status code.
 */
import { detectCellRegressions } from "../stats/cell-regression.js";
import type { Db } from "../store/database.js";
import { getRun, type RunRecord } from "../store/runs-repo.js";
import { runCellsOf, type UnitResult } from "../kinds/unit-results.js";
import { enqueueEvent } from "../webhooks/outbox.js";

export const GATE_REGRESSION = { alpha: 0.05 } as const;

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

type GlobToken = { kind: "char"; char: string } | { kind: "star" } | { kind: "globstar" };

function globTokens(pattern: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== "*") tokens.push({ kind: "char", char: pattern[i]! });
    else if (pattern[i + 1] === "*") {
      tokens.push({ kind: "globstar" });
      while (pattern[i + 1] === "*") i++;
    } else tokens.push({ kind: "star" });
  }
  return tokens;
}

/**
 * Whether `ref` matches a glob `pattern`: `*` matches within one path segment, `**` across
 * segments, everything else literally (`refs/heads/main`, `refs/tags/v*`, `refs/heads/release/**`).
 * Simulated as a set of pattern positions advanced one character at a time (no backtracking), so
 * it takes at most |pattern| x |ref| steps whatever the pattern: a request cannot stall the server.
 */
export function refMatches(pattern: string, ref: string): boolean {
  const tokens = globTokens(pattern);
  // A wildcard may match nothing: a position before one also stands after it.
  const close = (states: Uint8Array): Uint8Array => {
    for (let i = 0; i < tokens.length; i++) if (states[i] && tokens[i]!.kind !== "char") states[i + 1] = 1;
    return states;
  };
  const start = new Uint8Array(tokens.length + 1);
  start[0] = 1;
  let states = close(start);
  for (const char of ref) {
    const next = new Uint8Array(tokens.length + 1);
    let alive = false;
    for (let i = 0; i < tokens.length; i++) {
      if (!states[i]) continue;
      const token = tokens[i]!;
      const to = token.kind === "char" ? (token.char === char ? i + 1 : -1) : token.kind === "globstar" || char !== "/" ? i : -1;
      if (to >= 0) {
        next[to] = 1;
        alive = true;
      }
    }
    if (!alive) return false;
    states = close(next);
  }
  return states[tokens.length] === 1;
}

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

export function gateView(gate: GateRecord): Record<string, unknown> {
  return { id: gate.id, object: "gate", ...gate.spec, created: gate.created };
}

export function checkView(row: GateCheckRecord, baseUrl: string): Record<string, unknown> {
  const decided = row.decided;
  return {
    id: row.id,
    object: "gate_check",
    gate_id: row.gate_id,
    ref: row.ref,
    commit: row.commit_sha,
    status: row.status,
    run_id: row.run_id,
    run_url: `${baseUrl}/v1/runs/${row.run_id}`,
    report_url: `${baseUrl}/v1/runs/${row.run_id}/report`,
    regression: decided?.regression ?? null,
    baseline_run_id: decided?.baseline_run_id ?? null,
    detail: decided?.detail ?? null,
    created: row.created,
    decided_at: row.decided_at,
  };
}

function baselineRun(db: Db, check: GateCheckRow): RunRecord | undefined {
  const row = db
    .prepare("SELECT run_id FROM gate_checks WHERE gate_id = ? AND status = 'passed' AND id != ? ORDER BY decided_at DESC, created DESC LIMIT 1")
    .get(check.gate_id, check.id) as { run_id: string } | undefined;
  return row ? getRun(db, row.run_id) : undefined;
}

/**
 * Decides a pending check whose run has ended (no-op otherwise); emits `regression.detected` on a
 * regression. Called inside the transaction that ended the run (coordinator/kinds/eval.ts onEnded), so the decision and its event commit with the ending.
 */
function decideCheck(db: Db, check: GateCheckRow, now: Date): void {
  if (check.status !== "pending") return;
  const run = getRun(db, check.run_id);
  if (!run || !["completed", "failed", "stopped"].includes(run.status)) return;
  let status: "passed" | "failed";
  let decided: Record<string, unknown>;
  if (run.status !== "completed" || !run.result) {
    status = "failed";
    decided = { regression: null, baseline_run_id: null, detail: `run ${run.id} ${run.status}: ${run.statusCode ?? "unknown"}: ${run.statusMessage ?? ""}`.trim() };
  } else {
    const baseline = baselineRun(db, check);
    const current = (run.result.units as UnitResult[] | undefined) ?? [];
    const before = (baseline?.result?.units as UnitResult[] | undefined) ?? [];
    const pairs = current.flatMap((unit) => {
      const prior = before.find((b) => b.robot === unit.robot && b.task === unit.task && b.environment === unit.environment);
      return prior && prior.result.n > 0 && unit.result.n > 0 ? [{ unit, prior }] : [];
    });
    // One family per check: every compared unit, Holm-adjusted together.
    const verdicts = detectCellRegressions(pairs.map(({ unit, prior }) => ({ prior: runCellsOf(prior.result), current: runCellsOf(unit.result) })), GATE_REGRESSION);
    const units = pairs.map(({ unit, prior }, i) => ({
      unit: unit.key, prior: { n: prior.result.n, success_rate: prior.result.success_rate }, current: { n: unit.result.n, success_rate: unit.result.success_rate },
      ...verdicts[i], family_size: verdicts.length,
    }));
    const regressed = units.filter((u) => u.regressed);
    status = regressed.length ? "failed" : "passed";
    decided = {
      regression: baseline ? { regressed: regressed.length > 0, units } : null,
      baseline_run_id: baseline?.id ?? null,
      detail: baseline ? (regressed.length ? `${regressed.length} unit(s) regressed against ${baseline.id}` : `no regression against ${baseline.id}`) : "no earlier passed check: this run becomes the baseline",
    };
    if (regressed.length) {
      enqueueEvent(db, check.account_id, "regression.detected", {
        source: "gate", gate_id: check.gate_id, check_id: check.id, ref: check.ref, commit: check.commit_sha, run_id: run.id, baseline_run_id: baseline?.id ?? null, regressions: regressed,
      }, now);
    }
  }
  db.prepare("UPDATE gate_checks SET status = ?, decided = ?, decided_at = ? WHERE id = ? AND status = 'pending'")
    .run(status, JSON.stringify(decided), now.toISOString(), check.id);
}

/** Decides the checks of a run that just ended (the eval kind's onEnded). */
export function decideChecksOfRun(db: Db, runId: string, now: Date): void {
  const rows = db.prepare("SELECT * FROM gate_checks WHERE run_id = ? AND status = 'pending'").all(runId) as GateCheckRow[];
  for (const row of rows) decideCheck(db, row, now);
}
