/**
 * What the fields every kind accepts need beyond their declared shape (coordinator/runs/run-schemas.ts
 * COMMON_RUN_FIELDS, checked first): perturbation presets and distractor sets of the unit's scene,
 * the retention bounds, the account's leaderboard opt-in. `validateCommon` returns the priority and
 * the run seed (perturbation.seed, else random).
 */
import { randomInt } from "node:crypto";
import { environmentId, type CatalogEnvironment } from "../catalog/environments.js";
import { contract, fail, q } from "./field-checks.js";
import { RETENTION_MAX_H, RETENTION_MIN_H, retentionHours, type ValidateRunContext } from "./run-request.js";

export interface CommonChoices {
  priority: string;
  seed: number;
}

/**
 * Checks the shared optional fields against `environment` (perturbation presets) and the account,
 * and returns priority and run seed. Call it on a body whose shape has been checked.
 */
export function validateCommon(body: Record<string, unknown>, ctx: ValidateRunContext, environment: CatalogEnvironment): CommonChoices {
  const perturbation = validatePerturbation(body.perturbation as Perturbation | undefined, environment);
  validateData(body.data as { retention?: string } | undefined);
  if (body.publish === "leaderboard" && !ctx.leaderboardOptIn) {
    fail("publish_forbidden", `publish "leaderboard" needs the account's leaderboard opt-in; submit publish "private", or opt the account in with PUT /v1/account {"leaderboard": {"opt_in": true, "display_name": "..."}} (keys:admin)`);
  }
  const seed = perturbation?.seed ?? (ctx.randomSeed ?? (() => randomInt(0, 0x7fffffff)))();
  return { priority: (body.priority as string | undefined) ?? "standard", seed };
}

interface Perturbation {
  lighting?: string[];
  distractors?: string;
  seed?: number;
}

/** The scene's own presets: lighting and distractor sets must exist in `env`. */
export function validatePerturbation(value: Perturbation | undefined, env: CatalogEnvironment): { seed?: number } | undefined {
  if (value === undefined) return undefined;
  for (const preset of value.lighting ?? []) {
    if (!env.lighting.includes(preset)) contract(`perturbation.lighting: ${environmentId(env)} has no lighting preset ${q(preset)}; its presets: ${env.lighting.join(", ")}`);
  }
  if (value.distractors !== undefined && !env.distractor_sets.includes(value.distractors)) {
    contract(`perturbation.distractors: ${environmentId(env)} has no distractor set ${q(value.distractors)}; its sets: ${env.distractor_sets.join(", ")}`);
  }
  return { seed: value.seed };
}

/** Retention within bounds ("1h" to "365d"; the shape `<n>h`/`<n>d` is the schema's). */
export function validateData(value: { retention?: string } | undefined): void {
  if (value?.retention === undefined) return;
  const hours = retentionHours(value.retention);
  if (hours === undefined || hours < RETENTION_MIN_H || hours > RETENTION_MAX_H) {
    contract(`data.retention must be a duration from "1h" to "365d" written as <n>h or <n>d; got ${q(value.retention)}`);
  }
}
