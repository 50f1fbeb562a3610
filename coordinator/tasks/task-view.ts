/**
 * Store row -> the wire Task Spec. The owning account sees everything; any other account (which can
 * only read published frozen revisions) never sees `baseline`, `baseline_check` or the pilot's run id.
 */
import { wilsonInterval } from "../stats/wilson.js";
import type { Db } from "../store/database.js";
import { getRun } from "../store/runs-repo.js";
import type { TaskRecord } from "../store/tasks-repo.js";
import { DEFAULT_ENVIRONMENT_CLASS, type TaskSpecFields } from "./validate-task.js";

/** `pilot` as stored on the task (tasks.pilot JSON). */
export interface TaskPilot {
  run_id: string;
  robot: string;
  episodes: number;
  /** Every amendment made while piloting, oldest first. */
  amendments: Array<{ at: string; fields: string[] }>;
}

/** Flag comparing the customer's internal rate with the pilot run's Wilson 95% interval. */
export interface BaselineCheck {
  pilot_run_id: string;
  pilot_n: number;
  pilot_rate: number;
  pilot_ci95: [number, number];
  internal_rate: number;
  /** True when internal_rate lies outside pilot_ci95. */
  disagrees: boolean;
}

export function taskRev(row: Pick<TaskRecord, "name" | "version">): string | null {
  return row.version === null ? null : `${row.name}@v${row.version}`;
}

/** The stored spec with defaults for fields older rows may lack. */
export function storedSpec(row: Pick<TaskRecord, "name" | "visibility" | "spec">): TaskSpecFields {
  const spec = row.spec as Partial<TaskSpecFields>;
  return {
    name: row.name,
    visibility: row.visibility,
    environment_class: spec.environment_class ?? DEFAULT_ENVIRONMENT_CLASS,
    initial_conditions: spec.initial_conditions ?? {},
    success_predicates: spec.success_predicates ?? [],
    instructions: spec.instructions ?? null,
    stages: spec.stages ?? [],
    envelope: spec.envelope ?? null,
    baseline: spec.baseline ?? null,
  };
}

/**
 * The baseline check, once the pilot run has completed and the task has a baseline; undefined
 * otherwise. Computed on read, so it appears as soon as the run completes.
 */
export async function baselineCheck(db: Db, spec: TaskSpecFields, pilot: TaskPilot | null): Promise<BaselineCheck | undefined> {
  if (!spec.baseline || !pilot) return undefined;
  const run = await getRun(db, pilot.run_id);
  if (!run || run.status !== "completed" || run.result === null) return undefined;
  const result = run.result as { n?: number; success_rate?: number };
  const n = result.n ?? 0;
  if (n === 0) return undefined;
  const successes = Math.round((result.success_rate ?? 0) * n);
  const ci95 = wilsonInterval(successes, n, 0.95);
  const internal = spec.baseline.internal_rate;
  return {
    pilot_run_id: pilot.run_id,
    pilot_n: n,
    pilot_rate: successes / n,
    pilot_ci95: ci95,
    internal_rate: internal,
    disagrees: internal < ci95[0] || internal > ci95[1],
  };
}

/** The Task Spec as `viewerAccountId` may see it. */
export async function taskView(db: Db, row: TaskRecord, viewerAccountId: string): Promise<Record<string, unknown>> {
  const spec = storedSpec(row);
  const pilot = row.pilot as TaskPilot | null;
  const owner = row.account_id === viewerAccountId;
  const view: Record<string, unknown> = {
    id: row.id,
    object: "task",
    name: row.name,
    rev: taskRev(row),
    status: row.status,
    visibility: row.visibility,
    created: row.created,
    frozen: row.frozen,
    signatures: row.signatures,
    environment_class: spec.environment_class,
    initial_conditions: spec.initial_conditions,
    success_predicates: spec.success_predicates,
    instructions: spec.instructions,
    stages: spec.stages,
    envelope: spec.envelope,
  };
  if (owner) {
    view.baseline = spec.baseline;
    view.pilot = pilot;
    const check = await baselineCheck(db, spec, pilot);
    if (check) view.baseline_check = check;
  } else {
    view.pilot = pilot === null ? null : { robot: pilot.robot, episodes: pilot.episodes, amendments: pilot.amendments };
  }
  return view;
}
