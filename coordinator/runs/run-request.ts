/**
 * What a POST /v1/runs body becomes before it is stored: the constants every kind shares, the
 * context validation reads, the ValidatedRun a kind's `plan` returns, and the request as recorded
 * (defaults filled in). Types and constants only, plus one pure function: a leaf every kind imports.
 */
import type { PinnedModel } from "./model-ref.js";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import type { CatalogEnvironment } from "../catalog/environments.js";
import type { FleetView } from "../cells/fleet-view.js";
import type { RunUnit } from "../domain/units.js";
import type { Db } from "../store/database.js";
import type { NewEpisode, RunPlan } from "../store/runs-repo.js";
import { isPlainObject } from "./field-checks.js";

export { RUN_KINDS, type RunKindName } from "../domain/run-kinds.js";
import type { RunKindName } from "../domain/run-kinds.js";
export const PRIORITIES = ["burst", "standard", "soak"] as const;
export const INTERVENTIONS = ["none", "on_stall", "scripted"] as const;
export const PUBLISH = ["private", "leaderboard"] as const;
export const POLICY_TYPES = ["container", "checkpoint", "endpoint"] as const;
export const STATE_CHANNELS = ["joint_positions", "joint_velocities", "gripper_state", "ft_wrist"] as const;
/** The perturbation set revision every run currently uses (resolved_pins.perturbation_rev). */
export const PERTURBATION_REV = "assay-perturb@1";
export const CONTROL_RATE_HZ = 30;
export const MAX_EPISODE_DURATION_S = 20;
/**
 * Seconds the robot may stand idle with the task unfinished before its cell ends the episode early,
 * unsuccessful (runs without interventions; plan.idle_end_s, docs/api.md "How an episode ends").
 */
export const IDLE_END_S = 5;
export const DEFAULT_RETENTION = "30d";
export const RETENTION_MIN_H = 1;
export const RETENTION_MAX_H = 365 * 24;

export interface ValidateRunContext {
  db: Db;
  pins: FirmwarePins;
  environments: readonly CatalogEnvironment[];
  fleet: FleetView;
  accountId: string;
  /** Whether the account opted in to leaderboard publishing. */
  leaderboardOptIn: boolean;
  /** Source of the run seed when the perturbation gives none; default crypto randomInt. */
  randomSeed?: () => number;
}

/** A run ready to insert: what a kind's `plan` returns. */
export interface ValidatedRun {
  kind: RunKindName;
  /** The submission with defaults filled in: what the Run shows "as submitted". */
  request: Record<string, unknown>;
  resolvedPins: { robot: string; environment: string; task: string; perturbation_rev: string; models?: Record<string, PinnedModel> };
  plan: RunPlan;
  priority: string;
  episodesTotal: number;
  /** The run's units (kind `run`: one); absent only for runs built before units were universal. */
  units?: RunUnit[];
  episodes?: NewEpisode[];
  kindState?: object | null;
}

/**
 * The submission with defaults filled in (kind run, priority standard, interventions none, publish
 * private, data {retention 30d, train_on_failures false}). Purely syntactic: used both to record
 * the request and to compare an Idempotency-Key replay with the original body.
 */
export function normalizeRunRequest(body: Record<string, unknown>): Record<string, unknown> {
  const data = isPlainObject(body.data) ? body.data : {};
  return {
    ...body,
    kind: body.kind ?? "run",
    priority: body.priority ?? "standard",
    interventions: body.interventions ?? "none",
    publish: body.publish ?? "private",
    data: body.data === undefined || isPlainObject(body.data)
      ? { retention: DEFAULT_RETENTION, train_on_failures: false, ...data }
      : body.data,
  };
}

/** Parses a retention like "12h" or "30d" to hours; undefined when malformed. */
export function retentionHours(text: string): number | undefined {
  const match = /^(\d+)(h|d)$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * (match[2] === "d" ? 24 : 1);
}
