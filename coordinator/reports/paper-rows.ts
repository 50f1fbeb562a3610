/**
 * The rows of a paper's table and figure (issue 28 item 4): a rate with its n, successes and 95%
 * interval per unit of one completed run, or one row per run of a selection. Per kind, a run's rows are:
 *
 * - compare: its arms (one row per policy), transfer: its target and source, matrix: its cells
 *   (robot in environment): `result.units`;
 * - eval: one row per robot's suite score (`result.scores`; one robot, one row);
 * - run, verify, threshold: one row, the headline (`result`'s top level: the population it names).
 *
 * A unit's label names what differs between the units (the policy of a compare, the robot and
 * environment of a matrix); a run's row in a selection is labelled by the run's name, else its policy,
 * else its task on its robot. Everything a row says comes from the stored Result: nothing is recomputed.
 */
import type { RunRecord } from "../store/runs-repo.js";
import { kindModule } from "../kinds/registry.js";

/** One row: a rate, where it was measured, and its interval. */
export interface PaperRow {
  label: string;
  run_id: string;
  /** The run's kind (`run`, `compare`, ...). */
  kind: string;
  task: string;
  robot: string;
  environment: string;
  policy: string | null;
  n: number;
  successes: number;
  success_rate: number;
  ci95: [number, number];
  interval_method: string;
  /** The run's completion date, YYYY-MM-DD. */
  date: string;
}

/** What a paper output says about the runs behind its rows. */
export interface PaperSource {
  run: RunRecord;
  /** The run's name, when it has one (coordinator/runs: `name`), else null. */
  name: string | null;
  rows: PaperRow[];
}

interface UnitLike {
  key?: string;
  robot?: string;
  environment?: string;
  task?: string;
  policy_name?: string;
  role?: string;
  result?: Record<string, any>;
}

/** The run's name, when one was given (a `name` on the record or in the submitted body). */
export function runNameOf(run: RunRecord): string | null {
  const name = (run as RunRecord & { name?: unknown }).name ?? run.request.name;
  return typeof name === "string" && name.trim() !== "" ? name.trim() : null;
}

/** The run's policy name, when it has one policy with a name. */
export function policyNameOf(run: RunRecord): string | null {
  const name = run.request.policy_name;
  return typeof name === "string" && name !== "" ? name : null;
}

/** Successes behind a rate: the per-cell counts when recorded, else the rate times n. */
function successesOf(result: Record<string, any>): number {
  const byCell = result.cells?.by_cell as Array<{ successes: number }> | undefined;
  if (Array.isArray(byCell) && byCell.length > 0) return byCell.reduce((sum, c) => sum + c.successes, 0);
  return Math.round(Number(result.success_rate ?? 0) * Number(result.n ?? 0));
}

function rateOf(result: Record<string, any>): Pick<PaperRow, "n" | "successes" | "success_rate" | "ci95" | "interval_method"> {
  return {
    n: Number(result.n ?? 0),
    successes: successesOf(result),
    success_rate: Number(result.success_rate ?? 0),
    ci95: [Number(result.ci95?.[0] ?? 0), Number(result.ci95?.[1] ?? 0)],
    interval_method: String(result.interval_method ?? "wilson"),
  };
}

/** Labels naming what differs between units: the policy, role, robot, environment or task. */
function unitLabels(units: readonly UnitLike[]): string[] {
  const fields: Array<(u: UnitLike) => string | undefined> = [(u) => u.policy_name, (u) => u.role, (u) => u.robot, (u) => u.environment, (u) => u.task];
  const varying = fields.filter((field) => new Set(units.map(field)).size > 1);
  return units.map((u, i) => {
    const parts = varying.map((field) => field(u)).filter((p): p is string => typeof p === "string" && p !== "");
    return parts.length > 0 ? parts.join(", ") : (u.key ?? `unit ${i + 1}`);
  });
}

/** The label of a run's one row: its name, else its policy, else its task on its robot. */
export function runLabelOf(run: RunRecord): string {
  return runNameOf(run) ?? policyNameOf(run) ?? `${run.resolvedPins.task} on ${run.resolvedPins.robot}`;
}

/** The run's rows (a completed run's Result is required; the caller checks). */
export function paperRowsOfRun(run: RunRecord, layout = kindModule(run.kind).traits.paperRows): PaperRow[] {
  const result = (run.result ?? {}) as Record<string, any>;
  const pins = run.resolvedPins;
  const date = (run.completed ?? run.created).slice(0, 10);
  const base = { run_id: run.id, kind: run.kind, date };
  const units = (Array.isArray(result.units) ? result.units : []) as UnitLike[];
  if (layout === "units" && units.length > 0) return paperRowsOfUnits(run);
  const scores = (Array.isArray(result.scores) ? result.scores : []) as Array<Record<string, any>>;
  if (layout === "scores" && scores.length > 0) {
    const suite = typeof result.suite === "string" ? result.suite : pins.task;
    return scores.map((s) => ({
      ...base,
      label: scores.length > 1 ? String(s.robot) : runLabelOf(run),
      task: suite,
      robot: String(s.robot),
      environment: units[0]?.environment ?? pins.environment,
      policy: policyNameOf(run),
      n: Number(s.n ?? 0),
      successes: Math.round(Number(s.success_rate ?? 0) * Number(s.n ?? 0)),
      success_rate: Number(s.success_rate ?? 0),
      ci95: [Number(s.ci95?.[0] ?? 0), Number(s.ci95?.[1] ?? 0)],
      interval_method: String(s.interval_method ?? "beta-binomial-posterior"),
    }));
  }
  const first = units[0];
  return [{
    ...base,
    label: runNameOf(run) ?? first?.policy_name ?? runLabelOf(run),
    task: first?.task ?? pins.task,
    robot: first?.robot ?? pins.robot,
    environment: first?.environment ?? pins.environment,
    policy: first?.policy_name ?? policyNameOf(run),
    ...rateOf(result),
  }];
}

/** One row per unit of the run's Result (`result.units`, in order), labelled by what differs between them; none for a run without units. */
export function paperRowsOfUnits(run: RunRecord): PaperRow[] {
  const result = (run.result ?? {}) as Record<string, any>;
  const pins = run.resolvedPins;
  const units = (Array.isArray(result.units) ? result.units : []) as UnitLike[];
  const labels = unitLabels(units);
  return units.map((u, i) => ({
    run_id: run.id,
    kind: run.kind,
    date: (run.completed ?? run.created).slice(0, 10),
    label: labels[i],
    task: u.task ?? pins.task,
    robot: u.robot ?? pins.robot,
    environment: u.environment ?? pins.environment,
    policy: u.policy_name ?? null,
    ...rateOf(u.result ?? {}),
  }));
}

/** One row per run of a selection: each run's headline, labelled by the run. */
export function paperRowsOfSelection(runs: readonly RunRecord[]): PaperRow[] {
  return runs.map((run) => {
    const [row] = paperRowsOfRun(run, "headline");
    // A compare's headline is its first policy's rate: name that policy, not the run's task.
    return { ...row, kind: run.kind, label: runNameOf(run) ?? row.policy ?? runLabelOf(run) };
  });
}
