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
import { decidePendingCheck, findLastPassedRunId, listPendingChecksOfRun, type GateCheckRecord, type GateCheckRow, type GateRecord } from "../store/gates-repo.js";
import { runCellsOf, type UnitResult } from "./unit-results.js";
import { enqueueEvent } from "../webhooks/outbox.js";

export const GATE_REGRESSION = { alpha: 0.05 } as const;

export type { GateCheckRecord, GateCheckRow, GateRecord, GateSpec } from "../store/gates-repo.js";
export { getCheck, getGate, insertCheck, insertGate, listGates } from "../store/gates-repo.js";

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

async function baselineRun(db: Db, check: GateCheckRow): Promise<RunRecord | undefined> {
  const runId = await findLastPassedRunId(db, check.gate_id, check.id);
  return runId === undefined ? undefined : getRun(db, runId);
}

/**
 * Decides a pending check whose run has ended (no-op otherwise); emits `regression.detected` on a
 * regression. Called inside the transaction that ended the run (coordinator/kinds/eval.ts onEnded), so the decision and its event commit with the ending.
 */
async function decideCheck(db: Db, check: GateCheckRow, now: Date): Promise<void> {
  if (check.status !== "pending") return;
  const run = await getRun(db, check.run_id);
  if (!run || !["completed", "failed", "stopped"].includes(run.status)) return;
  let status: "passed" | "failed";
  let decided: Record<string, unknown>;
  if (run.status !== "completed" || !run.result) {
    status = "failed";
    decided = { regression: null, baseline_run_id: null, detail: `run ${run.id} ${run.status}: ${run.statusCode ?? "unknown"}: ${run.statusMessage ?? ""}`.trim() };
  } else {
    const baseline = await baselineRun(db, check);
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
      await enqueueEvent(db, check.account_id, "regression.detected", {
        source: "gate", gate_id: check.gate_id, check_id: check.id, ref: check.ref, commit: check.commit_sha, run_id: run.id, baseline_run_id: baseline?.id ?? null, regressions: regressed,
      }, now);
    }
  }
  await decidePendingCheck(db, check.id, status, JSON.stringify(decided), now.toISOString());
}

/** Decides the checks of a run that just ended (the eval kind's onEnded). */
export async function decideChecksOfRun(db: Db, runId: string, now: Date): Promise<void> {
  for (const row of await listPendingChecksOfRun(db, runId)) await decideCheck(db, row, now);
}
